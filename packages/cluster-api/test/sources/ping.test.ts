/**
 * PingSource on `serve`: created with kubectl, Ready with its sink resolved, and with `* * * * *`
 * an event reaches a local receiver within 61 s carrying Knative's attributes, its data and its
 * ceOverrides; one whose sink refuses connections gets a Warning Event after the retries; a sink
 * that does not resolve is SinkProvided False (NotFound); a malformed source is refused with
 * Knative's message; Knative's own PingSource CRD applied over the server's keeps sources served
 * and Ready.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Resources } from '@func/kube-client';
import { until } from '../../testing/src/poll.js';
import { conditionOf, KUBECTL, source, Sources, startReceiver, startSourcesCluster, waitCondition, type Source, type SourcesCluster } from './helpers.js';

const KnativePingCrd = '/work/shared/crds/knative-eventing/pingsource.yaml';

describe.runIf(existsSync(KUBECTL))('PingSource', () => {
  let c: SourcesCluster;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** A port nothing listens on: one bound, then closed. */
  let closedPort: number;
  beforeAll(async () => {
    [c, receiver] = await Promise.all([startSourcesCluster(), startReceiver()]);
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    closedPort = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    await receiver?.close();
  });

  it('sends every minute to its sink with Knative\'s attributes', async () => {
    const applied = await c.apply(source('PingSource', 'every-minute', {
      schedule: '* * * * *', contentType: 'application/json', data: '{"message":"hello","a":1}',
      sink: { uri: receiver.url }, ceOverrides: { extensions: { team: 'blue' } },
    }), source('PingSource', 'unanswered', { schedule: '* * * * *', data: 'x', sink: { uri: `http://127.0.0.1:${closedPort}/` } }));
    expect(applied.stderr).toBe('');
    const ready = await waitCondition(c.kube, 'ping', 'default', 'every-minute', 'Ready', 'True');
    expect(ready.status?.sinkUri).toBe(receiver.url);
    expect(ready.status?.observedGeneration).toBe(ready.metadata.generation);
    expect(['SinkProvided', 'Deployed'].map((t) => conditionOf(ready, t)?.status)).toEqual(['True', 'True']);
    const table = await c.kubectl('get', 'pingsources');
    expect(table.stdout).toMatch(/NAME\s+SINK\s+SCHEDULE\s+AGE\s+READY\s+REASON/);
    expect(table.stdout).toContain('* * * * *');
    // Knative's categories: `kubectl get sources` lists every source kind.
    expect((await c.kubectl('get', 'sources', '-o', 'name')).stdout).toContain('pingsource.sources.knative.dev/every-minute');

    const got = await until('a ping event', () => receiver.received[0], { timeoutMs: 61_000 + 5_000 });
    expect(got.headers['ce-type']).toBe('dev.knative.sources.ping');
    expect(got.headers['ce-source']).toBe('/apis/v1/namespaces/default/pingsources/every-minute');
    expect(got.headers['ce-specversion']).toBe('1.0');
    expect(got.headers['ce-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(got.headers['ce-time'] as string)).toBeGreaterThan(0);
    expect(got.headers['ce-team']).toBe('blue');
    expect(got.headers['content-type']).toBe('application/json');
    expect(JSON.parse(got.body)).toEqual({ a: 1, message: 'hello' });

    // The source whose sink refuses connections: after the retries, a Warning Event on it.
    const warning = await until('a Warning Event on the unanswered source', async () => {
      const events = await c.kube.list<{ type?: string; reason?: string; message?: string }>(Resources.events, { namespace: 'default', fieldSelector: 'involvedObject.name=unanswered' });
      return events.items.find((e) => e.type === 'Warning' && e.reason === 'PingSourceSendFailed');
    }, { timeoutMs: 20_000 });
    expect(warning.message).toMatch(new RegExp(`^failed to send event [0-9a-f-]{36} to http://127\\.0\\.0\\.1:${closedPort}/: ECONNREFUSED$`));
  }, 100_000);

  it('is not Ready while its sink does not resolve, and says why', async () => {
    await c.apply(source('PingSource', 'nowhere', { schedule: '0 * * * *', sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'missing' } } }));
    const o = await waitCondition(c.kube, 'ping', 'default', 'nowhere', 'SinkProvided', 'False');
    expect(conditionOf(o, 'SinkProvided')?.reason).toBe('NotFound');
    expect(conditionOf(o, 'SinkProvided')?.message).toContain('brokers.eventing.knative.dev "missing" not found');
    expect(conditionOf(o, 'Ready')?.status).toBe('False');
    expect(o.status?.sinkUri).toBeUndefined();
  }, 40_000);

  it('refuses a malformed PingSource with Knative\'s message, through kubectl', async () => {
    const r = await c.apply(source('PingSource', 'bad', { schedule: '@every 1m', data: 'a', dataBase64: 'YQ==', sink: { uri: receiver.url } }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('admission webhook "validation.webhook.eventing.knative.dev" denied the request: validation failed: expected exactly one, got both: spec.data, spec.dataBase64\ninvalid value: unsupported descriptor @every: spec.schedule');
    expect(r.stderr).not.toMatch(/ at |node:|\.ts:/);
    await expect(c.kube.get(Sources.ping, 'bad', { namespace: 'default' })).rejects.toThrow(/not found/);
  }, 30_000);

  it('keeps working under Knative\'s own PingSource CRD', async () => {
    const r = await c.kubectl('apply', '-f', KnativePingCrd);
    expect(r.code).toBe(0);
    await c.kubectl('wait', '--for=condition=Established', '--timeout=20s', '-f', KnativePingCrd);
    await c.apply(source('PingSource', 'after-crd', { schedule: '0 * * * *', data: 'x', sink: { uri: receiver.url } }));
    await waitCondition(c.kube, 'ping', 'default', 'after-crd', 'Ready', 'True');
    const old = await c.kube.get<Source>(Sources.ping, 'every-minute', { namespace: 'default' });
    expect(conditionOf(old, 'Ready')?.status).toBe('True');
  }, 60_000);
});
