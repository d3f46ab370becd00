/**
 * Sources with a deployed function (`cluster-api serve`, the built CLI, its embedded node running
 * the recorder function's image in processes): a PingSource with `* * * * *` whose sink is the
 * function's Service delivers to it within 61 s with Knative's attributes; a SinkBinding on the
 * function's Deployment gives its running process `K_SINK`, the Broker's address.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haveKubectl, startServe, type ServeProcess } from '../serve/process.js';
import { functionImage, privatePodAddresses } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const recorder = fileURLToPath(new URL('./fixtures/recorder-fn', import.meta.url));
type Pod = { metadata: { name: string }; status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] } };

/** A pod CIDR of this test's own, clear of serve's default Service range (127.128.0.0/12). */
const podCidr = (): string => {
  for (;;) {
    const cidr = privatePodAddresses().nodeControllers!.clusterCidr!;
    if (Number(cidr.split('.')[1]) >= 144) return cidr;
  }
};

describe.runIf(haveKubectl)('sources with a deployed function', () => {
  let s: ServeProcess;
  const json = async (...args: string[]) => {
    const r = await s.kubectl('get', ...args, '-o', 'json');
    return r.code === 0 ? JSON.parse(r.stdout) : undefined;
  };
  /** The function's ready pod: its address. */
  const readyPodIp = async (): Promise<string | undefined> => {
    const pods = await json('pods', '-l', 'app=recorder');
    const ready = (pods?.items ?? []).find((p: Pod) => p.status?.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready?.status?.podIP;
  };

  beforeAll(async () => {
    s = await startServe(['--storage', 'memory:', '--node-name', 'vm', '--cluster-cidr', podCidr()]);
    await functionImage(join(s.dir, 'data', 'images'), recorder, 'recorder:v1');
  }, 240_000);
  afterAll(() => s?.close());

  it('delivers a PingSource\'s events to the function and binds its process to a Broker', async () => {
    const { writeFileSync } = await import('node:fs');
    const file = join(s.dir, 'function.json');
    writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', metadata: { name: 'default', namespace: 'default' } },
      {
        apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'recorder', namespace: 'default' },
        spec: { replicas: 1, selector: { matchLabels: { app: 'recorder' } }, template: { metadata: { labels: { app: 'recorder' } }, spec: { containers: [{ name: 'fn', image: 'recorder:v1', ports: [{ containerPort: 8080 }] }] } } },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'recorder', namespace: 'default' }, spec: { selector: { app: 'recorder' }, ports: [{ port: 80, targetPort: 8080 }] } },
      {
        apiVersion: 'sources.knative.dev/v1', kind: 'SinkBinding', metadata: { name: 'recorder-to-broker', namespace: 'default' },
        spec: { subject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'recorder' }, sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'default' } } },
      },
      {
        apiVersion: 'sources.knative.dev/v1', kind: 'PingSource', metadata: { name: 'to-function', namespace: 'default' },
        spec: { schedule: '* * * * *', contentType: 'application/json', data: '{"message":"ping"}', sink: { ref: { apiVersion: 'v1', kind: 'Service', name: 'recorder' } } },
      },
    ] }));
    const applied = await s.kubectl('apply', '-f', file);
    expect(applied.code, applied.stderr).toBe(0);
    const brokerUrl = await until('the Broker\'s address', async () => (await json('brokers.eventing.knative.dev', 'default'))?.status?.address?.url as string | undefined, { timeoutMs: 60_000 });

    // The bound process has K_SINK: the SinkBinding rolled the Deployment out with it.
    const ip = await until('a ready pod of the function with K_SINK', async () => {
      const at = await readyPodIp();
      if (!at) return undefined;
      const sink = await fetch(`http://${at}:8080/env?name=K_SINK`).then((r) => r.text(), () => '');
      return sink === brokerUrl ? at : undefined;
    }, { timeoutMs: 120_000, everyMs: 500 });

    // The PingSource resolves the Service through its Endpoints and is Ready; its event arrives within the minute.
    await until('the PingSource Ready', async () => (await json('pingsources', 'to-function'))?.status?.conditions?.find((c: { type: string }) => c.type === 'Ready')?.status === 'True' || undefined, { timeoutMs: 60_000 });
    const event = await until('a ping event at the function', async () => {
      const events = await fetch(`http://${ip}:8080/events`).then((r) => r.json() as Promise<{ headers: Record<string, string>; body: string }[]>, () => []);
      return events.find((e) => e.headers['ce-type'] === 'dev.knative.sources.ping');
    }, { timeoutMs: 66_000, everyMs: 500 });
    expect(event.headers['ce-source']).toBe('/apis/v1/namespaces/default/pingsources/to-function');
    expect(event.headers['ce-specversion']).toBe('1.0');
    expect(event.headers['ce-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(event.body)).toEqual({ message: 'ping' });
  }, 400_000);
});
