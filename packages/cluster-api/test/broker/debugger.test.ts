/**
 * The event debugger end to end, on SQLite and on NATS JetStream (a real nats-server): the broker
 * reading Knative's CRDs from a real cluster API (kubectl), real subscribers, and `func-runtime events`
 * (the built CLI, with the cluster's kubeconfig). `get` shows an event's whole path (ingress, each
 * Trigger matched or not and why, each attempt with its outcome and latency, the reply, the
 * dead-letter sink); `tail` streams events as they are stored, with a CESQL filter; `replay` stores
 * an event again (one, or all that were dead-lettered); `filter-test` runs a Trigger's filter over the
 * stored events. The API authorizes by RBAC: no token 401, a token without `brokers/events` 403.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '@func/kube-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startClusterBroker, type ClusterBroker } from '../../src/broker/cluster/start.js';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import { silentLogger } from '../../src/broker/metrics.js';
import { binaryEvent, post, type Subscriber, subscriber } from './helpers.js';
import { type ApiCluster, BROKER_CRD_FILE, brokerOf, KUBECTL, KNATIVE_CRDS, manifest, namespace, startApi, TRIGGER_CRD_FILE, triggerOf, waitCondition } from './cluster-helpers.js';
import { FUNC_RUNTIME, run, start, stopAll } from './roles.js';
import { until } from '../../testing/src/poll.js';

const ready = existsSync(KUBECTL) && existsSync(KNATIVE_CRDS) && existsSync(FUNC_RUNTIME);

describe.runIf(ready).each(['sqlite', 'nats'] as const)('the event debugger on %s', (engine) => {
  let api: ApiCluster;
  let nats: NatsCluster | undefined;
  let broker: ClusterBroker;
  let dir: string;
  let ok: Subscriber;
  let failing: Subscriber;
  let dls: Subscriber;
  let adminToken: string;
  const ns = `dbg-${engine}`;
  const env = () => ({ KUBECONFIG: api.kubeconfig, HOME: dir });
  const events = (...args: string[]) => run([FUNC_RUNTIME, 'events', ...args, '--broker', `${ns}/default`], env());
  const send = (attrs: Record<string, string>) => {
    const e = binaryEvent(attrs);
    return post(`${broker.broker.url}/${ns}/default`, e.headers, e.body);
  };
  const api_ = (path: string, token?: string, method = 'GET') =>
    fetch(`${broker.broker.url}/debug/v1/namespaces/${ns}/${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `debugger-${engine}-`));
    api = await startApi();
    if (engine === 'nats') nats = await startNats(1);
    await api.kubectl('apply', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    adminToken = KubeClient.fromKubeconfig({ kubeconfig: api.kubeconfig }).connection.credentials.token!;
    broker = await startClusterBroker({
      client: KubeClient.fromKubeconfig({ kubeconfig: api.kubeconfig }),
      store: engine === 'nats' ? nats!.url : `sqlite:${join(dir, 'broker.db')}`,
      resyncMs: 200, logger: silentLogger, minBackoffMs: 50, maxBackoffMs: 500,
    });
    // `orders` replies with an event; `failing` always answers 500.
    ok = await subscriber((r, _n, res) => void res.writeHead(200, { 'ce-specversion': '1.0', 'ce-id': `reply-${String(r.headers['ce-id'])}`, 'ce-source': '/orders', 'ce-type': 'order.confirmed' }).end());
    failing = await subscriber((_r, _n, res) => void res.writeHead(500).end('database down'));
    dls = await subscriber();
    await namespace(api.kube, ns);
    await api.apply(manifest(
      brokerOf('default', ns),
      triggerOf('orders', ns, { broker: 'default', filter: { attributes: { type: 'order.created' } }, subscriber: { uri: ok.url } }),
      triggerOf('failing', ns, { broker: 'default', filter: { attributes: { type: 'order.failed' } }, subscriber: { uri: failing.url }, delivery: { retry: 1, backoffDelay: 'PT0.05S', deadLetterSink: { uri: dls.url } } }),
    ));
    await waitCondition(api.kube, 'Trigger', ns, 'orders', 'Ready', 'True');
    await waitCondition(api.kube, 'Trigger', ns, 'failing', 'Ready', 'True');
    expect((await send({ id: 'o1', type: 'order.created', source: '/shop' })).status).toBe(202);
    expect((await send({ id: 'f1', type: 'order.failed', source: '/shop' })).status).toBe(202);
    await ok.until(1);
    await dls.until(1);
  }, 60_000);
  afterAll(async () => {
    await stopAll();
    await broker?.stop();
    for (const s of [ok, failing, dls]) await s?.close();
    await nats?.stop();
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("get: an event's whole path, each Trigger matched or not and why, each attempt, its reply", async () => {
    // The journal is written just after each step: poll until the reply's step is there.
    const path = await until('the whole path of o1', async () => {
      const r = await events('get', 'o1', '-o', 'json');
      const body = r.code === 0 ? (JSON.parse(r.stdout) as { steps: Record<string, unknown>[] }) : undefined;
      return body?.steps.some((s) => s.k === 'event' && s.via === 'reply') ? body : undefined;
    }, { timeoutMs: 30_000 });
    const steps = path.steps;
    expect(steps[0]).toMatchObject({ k: 'event', id: 'o1', via: 'ingress', attributes: { type: 'order.created', source: '/shop' } });
    // A Trigger that matched shows as its attempts; one that did not, with why.
    expect(steps.filter((s) => s.k === 'match').map((s) => s.trigger)).toEqual([`${ns}/failing`]);
    expect(steps).toContainEqual(expect.objectContaining({ k: 'match', trigger: `${ns}/failing`, matched: false, why: 'type is "order.created"; the filter wants "order.failed"' }));
    const attempt = steps.find((s) => s.k === 'attempt')!;
    expect(attempt).toMatchObject({ trigger: `${ns}/orders`, n: 1, url: ok.url, outcome: 'reply' });
    expect(typeof attempt.ms).toBe('number');
    expect(steps).toContainEqual(expect.objectContaining({ k: 'event', id: 'reply-o1', via: 'reply', replyTo: 'o1', trigger: `${ns}/orders` }));
    // The same as text, a line a step.
    const text = await events('get', 'o1');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`${ns}/failing: not matched: type is "order.created"; the filter wants "order.failed"`));
    expect(text.stdout).toMatch(new RegExp(`${ns}/orders: attempt 1 → ${ok.url}: reply in [\\d.]+ ms`));
  });

  it('get: the failed attempts with their status, then the dead-letter sink', async () => {
    const body = await until('f1 dead-lettered in the journal', async () => {
      const r = await events('get', 'f1', '-o', 'json');
      const b = r.code === 0 ? (JSON.parse(r.stdout) as { steps: Record<string, unknown>[] }) : undefined;
      return b?.steps.some((s) => s.k === 'deadletter') ? b : undefined;
    }, { timeoutMs: 30_000 });
    const attempts = body.steps.filter((s) => s.k === 'attempt');
    expect(attempts.map((a) => [a.n, a.code, a.outcome, a.why])).toEqual([[1, 500, 'retry', 'HTTP 500'], [2, 500, 'retry', 'HTTP 500']]);
    expect(body.steps.at(-1)).toMatchObject({ k: 'deadletter', trigger: `${ns}/failing`, sink: dls.url, ok: true });
    const missing = await events('get', 'no-such-event');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('event "no-such-event" is not in the journal');
  });

  it('tail: the stored events, filtered with CESQL, then each new one as it passes', async () => {
    const once = await events('tail', '--no-follow', '--filter', 'type = "order.failed"', '-o', 'json');
    expect(once.code, once.stderr).toBe(0);
    expect(once.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(['f1']);
    const all = await events('tail', '--no-follow');
    expect(all.stdout).toMatch(/stored \(ingress\)\s+o1\s+type=order\.created source=\/shop/);
    expect(all.stdout).toMatch(/stored \(reply to o1 from [^)]+\)\s+reply-o1/);
    const follow = start([FUNC_RUNTIME, 'events', 'tail', '--broker', `${ns}/default`, '--filter', 'source = "/live"', '-o', 'json'], env());
    // Nothing stored matches yet; a new event shows up as it passes.
    await until('the tail listening', async () => {
      expect((await send({ id: `live-${Date.now()}`, type: 'order.created', source: '/live' })).status).toBe(202);
      return follow.output().includes('"source":"/live"');
    }, { timeoutMs: 30_000 });
    const entry = await follow.line((e) => (e.attributes as { source?: string } | undefined)?.source === '/live');
    expect(entry).toMatchObject({ k: 'event', via: 'ingress', attributes: { type: 'order.created' } });
    expect(follow.output()).not.toContain('"id":"o1"');
    await follow.stop();
    const bad = await events('tail', '--no-follow', '--filter', 'type = ');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/the broker refused: 400: filter: /);
  });

  it('replay: one event, or every dead-lettered one, stored again and delivered again', async () => {
    const one = await events('replay', 'f1');
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toBe('replayed: f1\n');
    await dls.until(2);
    const all = await events('replay', '--from-dead-letter');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toBe('replayed: f1\n');
    await dls.until(3);
    expect(dls.received.map((r) => r.headers['ce-id'])).toEqual(['f1', 'f1', 'f1']);
    const usage = await events('replay');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('replay needs an event id (or --from-dead-letter)');
  });

  it("filter-test: the Trigger's filter against the stored events, with why not", async () => {
    const r = await events('filter-test', 'failing', '--last', '2000');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Trigger ${ns}/failing against the last`);
    expect(r.stdout).toMatch(/^MATCH +f1 +type=order\.failed$/m);
    expect(r.stdout).toMatch(/^NO MATCH +o1 +type=order\.created +\(type is "order\.created"; the filter wants "order\.failed"\)$/m);
    expect((await events('filter-test', 'nope')).stderr).toContain('triggers.eventing.knative.dev "nope" not found');
    expect((await events('filter-test', 'failing', '--last', '0')).code).toBe(2);
  });

  it('authorizes by RBAC: no token 401, an unknown one 401, a token without brokers/events 403', async () => {
    expect((await api_('brokers/default/events')).status).toBe(401);
    expect((await api_('brokers/default/events', 'not-a-token')).status).toBe(401);
    await api.kubectl('create', 'serviceaccount', 'viewer', '-n', ns);
    // It may read Brokers, not their events.
    await api.kubectl('create', 'role', 'broker-reader', '-n', ns, '--verb=get,list', '--resource=brokers.eventing.knative.dev');
    await api.kubectl('create', 'rolebinding', 'broker-reader', '-n', ns, '--role=broker-reader', `--serviceaccount=${ns}:viewer`);
    const token = (await api.kubectl('create', 'token', 'viewer', '-n', ns)).stdout.trim();
    const denied = await api_('brokers/default/events', token);
    expect(denied.status).toBe(403);
    expect(await denied.json()).toMatchObject({ kind: 'Status', code: 403, reason: 'Forbidden', message: expect.stringContaining(`cannot get resource "brokers/events"`) });
    expect((await api_('brokers/default/events/f1/replay', token, 'POST')).status).toBe(403);
    // Granted get on brokers/events: it may read, not replay.
    await api.kubectl('create', 'role', 'event-reader', '-n', ns, '--verb=get', '--resource=brokers.eventing.knative.dev/events');
    await api.kubectl('create', 'rolebinding', 'event-reader', '-n', ns, '--role=event-reader', `--serviceaccount=${ns}:viewer`);
    // The broker caches a refusal for 30 s, as a kubelet does: the grant shows once it expires.
    const got = await until('the read allowed', async () => ((await api_('brokers/default/events/o1', token)).status === 200 ? true : undefined), { timeoutMs: 60_000 });
    expect(got).toBe(true);
    expect((await api_('brokers/default/events/f1/replay', token, 'POST')).status).toBe(403);
    expect((await api_('brokers/default/events', adminToken)).status).toBe(200);
    expect((await api_('nonsense', adminToken)).status).toBe(404);
  }, 90_000);
});
