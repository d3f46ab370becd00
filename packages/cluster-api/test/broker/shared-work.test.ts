/**
 * Two `cluster-api broker` processes reading the same API server and sharing one NATS JetStream
 * store, advertising one address: each event is delivered once per Trigger across them, their
 * statuses agree (no process rewrites what the other wrote), and one killed with SIGKILL leaves the
 * other delivering.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NatsCluster, startNats } from '../../src/broker/log/testing/nats-server.js';
import { runKubectl } from '../support/helpers.js';
import { BROKER_CRD_FILE, brokerOf, KNATIVE_CRDS, KUBECTL, manifest, TRIGGER_CRD_FILE, triggerOf } from './cluster-helpers.js';
import { binaryEvent, post, type Subscriber, subscriber } from './helpers.js';
import { CLUSTER_API, type Proc, start, stopAll } from './roles.js';
import { until } from '../../testing/src/poll.js';

describe.runIf(existsSync(KUBECTL) && existsSync(KNATIVE_CRDS) && existsSync(CLUSTER_API))('broker processes sharing NATS', () => {
  let dir: string;
  let nats: NatsCluster;
  let sink: Subscriber;
  let env: NodeJS.ProcessEnv;
  const brokers: { proc: Proc; url: string }[] = [];
  const kubectl = (...args: string[]) => runKubectl(KUBECTL, env, args);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-shared-'));
    nats = await startNats(1);
    sink = await subscriber();
    const data = join(dir, 'data');
    env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(data, 'kubeconfig.yaml'), KUBECACHEDIR: join(dir, 'cache') };
    await start([CLUSTER_API, 'serve', '--port', '0', '--data-dir', data, '--no-broker']).line((e) => e.msg === 'listening');
    for (const n of [0, 1]) {
      const proc = start([CLUSTER_API, 'broker', '--kubeconfig', env.KUBECONFIG!, '--broker-store', nats.url, '--port', '0', '--advertise-address', 'events.local:8090', '--data-dir', join(dir, `b${n}`)]);
      brokers.push({ proc, url: (await proc.line((e) => e.msg === 'listening')).url as string });
    }
  }, 120_000);
  afterAll(async () => {
    await stopAll();
    await sink?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers each event once across both, with one status for both', async () => {
    expect((await kubectl('apply', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE)).code).toBe(0);
    await kubectl('wait', '--for=condition=Established', '--timeout=20s', '-f', BROKER_CRD_FILE, '-f', TRIGGER_CRD_FILE);
    writeFileSync(join(dir, 'objects.yaml'), manifest(brokerOf('default'), triggerOf('all', undefined, { broker: 'default', subscriber: { uri: sink.url } })));
    expect((await kubectl('apply', '-f', join(dir, 'objects.yaml'))).code).toBe(0);
    await until('the Trigger Ready', async () => /^all\s+default\s+\S+\s+\S+\s+True/m.test((await kubectl('get', 'triggers')).stdout), { timeoutMs: 30_000 });
    expect((await kubectl('get', 'broker', 'default', '-o', 'jsonpath={.status.address.url}')).stdout).toBe('http://events.local:8090/default/default');
    // Both processes must be serving the Broker before events go to either.
    await until('both ingresses take events', async () => {
      const r = await Promise.all(brokers.map((b) => post(`${b.url}/default/default`, binaryEvent({ id: `probe-${b.url}` }).headers, '{}')));
      return r.every((x) => x.status === 202);
    }, { timeoutMs: 30_000 });
    for (let i = 0; i < 40; i++) {
      const e = binaryEvent({ id: `e${i}` });
      expect((await post(`${brokers[i % 2]!.url}/default/default`, e.headers, e.body)).status).toBe(202);
    }
    await until('every event delivered', () => new Set(sink.received.map((r) => r.headers['ce-id'])).size >= 42, { timeoutMs: 30_000 });
    const ids = sink.received.map((r) => String(r.headers['ce-id'])).filter((id) => id.startsWith('e'));
    expect(ids.sort()).toEqual(Array.from({ length: 40 }, (_, i) => `e${i}`).sort());
    const rv = async () => (await kubectl('get', 'triggers', 'all', '-o', 'jsonpath={.metadata.resourceVersion}')).stdout;
    const before = await rv();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await rv()).toBe(before);
  }, 120_000);

  it('keeps delivering through the other process when one is killed', async () => {
    const [gone, left] = brokers as [(typeof brokers)[0], (typeof brokers)[0]];
    await gone.proc.stop();
    const e = binaryEvent({ id: 'after-kill' });
    expect((await post(`${left.url}/default/default`, e.headers, e.body)).status).toBe(202);
    await until('the event after the kill', () => sink.received.some((r) => r.headers['ce-id'] === 'after-kill'), { timeoutMs: 30_000 });
    // The kill and the wait above each take their time under load: the test's budget covers both.
  }, 60_000);
});
