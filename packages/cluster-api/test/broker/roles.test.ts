/**
 * The broker's processes and their refusals: `cluster-api broker` and `cluster-api serve` with bad
 * flags, a kubeconfig that cannot be used, a port in use; `cluster-api broker` started before its API
 * server is up; SIGTERM. And `func-runtime invoke --broker <name>` against a real cluster API when
 * the Broker has no address yet or the cluster serves no Brokers.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl } from '../support/helpers.js';
import { type ApiCluster, BROKER_CRD_FILE, brokers, KNATIVE_CRDS, KUBECTL, startApi } from './cluster-helpers.js';
import { CLUSTER_API, FUNC_RUNTIME, run, start, stopAll } from './roles.js';
import { until } from '../../testing/src/poll.js';

const ready = existsSync(KUBECTL) && existsSync(KNATIVE_CRDS) && existsSync(CLUSTER_API) && existsSync(FUNC_RUNTIME);

describe.runIf(ready)('the broker processes', () => {
  let dir: string;
  let api: ApiCluster;
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'broker-roles-'));
    api = await startApi();
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterEach(() => stopAll());
  afterAll(async () => {
    await new Promise((r) => busy.close(r));
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    [['--broker-store', 'redis://x'], /cluster-api: --broker-store: "redis:\/\/x" is not a broker store: use sqlite:<file> or nats:\/\//],
    [['--port', 'eighty'], /cluster-api: --port must be an integer 0-65535, got eighty/],
    [['--advertise-address', 'http://x/'], /cluster-api: --advertise-address: "http:\/\/x\/" is not a host or host:port/],
    [['--kubeconfig', '/nonexistent/kubeconfig.yaml'], /cluster-api: kubeconfig \/nonexistent\/kubeconfig\.yaml: /],
    [['--context', 'nope'], /cluster-api: kubeconfig .*: context "nope" is not defined/],
  ])('cluster-api broker %j exits 1 saying why', async (args, message) => {
    const r = await run([CLUSTER_API, 'broker', '--data-dir', join(dir, 'b'), ...(args.includes('--kubeconfig') ? [] : ['--kubeconfig', api.kubeconfig]), ...args]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses a port in use, for the broker alone and for the one in serve', async () => {
    const alone = await run([CLUSTER_API, 'broker', '--kubeconfig', api.kubeconfig, '--port', String(busyPort), '--data-dir', join(dir, 'b1')]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain(`cluster-api: port ${busyPort} on 127.0.0.1 is in use: pick another with --port`);
    const served = await run([CLUSTER_API, 'serve', '--port', '0', '--data-dir', join(dir, 's1'), '--broker-port', String(busyPort)]);
    expect(served.code).toBe(1);
    expect(served.stderr).toContain(`cluster-api: the broker's port ${busyPort} on 127.0.0.1 is in use: pick another with --broker-port, or run without the broker (--no-broker)`);
  });

  it('starts before its API server is reachable, serves once it is, and stops on SIGTERM', async () => {
    const data = join(dir, 'late');
    const kubeconfig = join(data, 'kubeconfig.yaml');
    // The API's kubeconfig exists once the API has started once: start it, note its port, stop it.
    const first = start([CLUSTER_API, 'serve', '--port', '0', '--data-dir', data, '--no-broker']);
    const port = new URL((await first.line((e) => e.msg === 'listening')).url as string).port;
    await first.stop();
    const broker = start([CLUSTER_API, 'broker', '--kubeconfig', kubeconfig, '--port', '0', '--data-dir', join(dir, 'late-broker')]);
    const url = (await broker.line((e) => e.msg === 'listening')).url as string;
    await broker.line((e) => e.msg === 'broker watch failed, retrying');
    start([CLUSTER_API, 'serve', '--port', port, '--data-dir', data, '--no-broker']);
    const env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
    const kubectl = (...args: string[]) => runKubectl(KUBECTL, env, args);
    await until('the API again', async () => (await kubectl('get', 'ns', 'default')).code === 0, { timeoutMs: 30_000 });
    writeFileSync(join(dir, 'b.yaml'), 'apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: default}\n');
    expect((await kubectl('apply', '-f', BROKER_CRD_FILE)).code).toBe(0);
    await until('the Broker created', async () => (await kubectl('apply', '-f', join(dir, 'b.yaml'))).code === 0, { timeoutMs: 30_000 });
    await until('its address', async () => (await kubectl('get', 'broker', 'default', '-o', 'jsonpath={.status.address.url}')).stdout === `${url}/default/default`, { timeoutMs: 30_000 });
    broker.child.kill('SIGTERM');
    const code = await new Promise((r) => broker.child.once('exit', r));
    expect(code).toBe(0);
    expect(broker.output()).toContain('"msg":"shutting down","signal":"SIGTERM"');
  });

  it('func-runtime invoke --broker <name> says why a Broker cannot take events yet', async () => {
    const env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: api.kubeconfig };
    const invoke = (...args: string[]) => run([FUNC_RUNTIME, 'invoke', ...args], env);
    const none = await invoke('--broker', 'default');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/func-runtime invoke: the cluster at https:\/\/127\.0\.0\.1:\d+ serves no Brokers: apply Knative Eventing's CRDs/);
    expect((await api.kubectl('apply', '-f', BROKER_CRD_FILE)).code).toBe(0);
    await until('brokers served', async () => (await api.kubectl('get', 'brokers')).code === 0, { timeoutMs: 30_000 });
    await api.apply('apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: waiting, namespace: default}\n');
    const unreconciled = await invoke('--broker', 'default/waiting');
    expect(unreconciled.code).toBe(1);
    expect(unreconciled.stderr).toContain('Broker default/waiting has no address yet: no broker has reconciled it yet (is `cluster-api serve` or `cluster-api broker` running?).');
    const status = { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'StreamUnavailable', message: 'cannot reach NATS' }] } };
    await api.kube.patch(brokers, 'waiting', status, { namespace: 'default', type: 'merge', subresource: 'status' });
    const notReady = await invoke('--broker', 'waiting');
    expect(notReady.stderr).toContain('Broker default/waiting has no address yet: Ready is False (StreamUnavailable: cannot reach NATS).');
  });
});
