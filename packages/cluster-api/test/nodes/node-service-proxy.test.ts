/**
 * The node agent's service proxy with real function pods: a Service answers at `clusterIP:port`
 * from this process (clusterIPs from a loopback range, as serve's default), connections go round
 * robin over the ready pods, a pod whose readiness fails is no longer chosen, a NodePort Service
 * answers at the node's address, a deleted Service's address stops listening, and a Service whose
 * address is taken is logged while the agent goes on serving the others.
 */
import { get } from 'node:http';
import { createServer, connect, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { isReady, podUntil, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster({ serviceClusterIpRange: '127.176.0.0/12' });

const fn = (name: string, app: string) => ({
  metadata: { name, labels: { app } },
  spec: { containers: [{ name: 'fn', image: 'probe:v1', ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { path: '/health/readiness', port: 8080 }, periodSeconds: 1, failureThreshold: 1 } }] },
});
const service = (name: string, app: string, spec: Record<string, unknown> = {}) => ({
  metadata: { name }, spec: { selector: { app }, ports: [{ name: 'http', port: 8081, targetPort: 8080 }], ...spec },
});

/** A GET on a connection of its own (the proxy balances connections, not requests). */
const text = (url: string) => new Promise<string>((resolve, reject) => {
  get(url, { agent: false }, (res) => {
    let body = '';
    res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve(body)).on('error', reject);
  }).on('error', reject);
});
/** Whether something accepts a TCP connection at `host:port` (refused or reset: false). */
const accepts = (host: string, port: number) => new Promise<boolean>((resolve) => {
  const s = connect(port, host);
  s.once('connect', () => (s.destroy(), resolve(true))).once('error', () => resolve(false));
});
const endpointsReady = (name: string, n: number) => until(`${n} ready endpoints of ${name}`, async () => {
  const ep = await current.kube.get<Obj & { subsets?: { addresses?: object[] }[] }>(Resources.endpoints, name, { namespace: 'default' }).catch(() => undefined);
  const ready = (ep?.subsets ?? []).flatMap((s) => s.addresses ?? []);
  return ready.length === n && ep;
}, { timeoutMs: 60_000, everyMs: 100 });
const listening = () => current.cluster.agents.get('node-a')!.proxy!.addresses();
const created = async (body: Obj) => (await current.kube.create<Obj>(Resources.services, body)).spec as { clusterIP: string; ports: { nodePort?: number }[] };

describe('the node service proxy', () => {
  it('answers at the Service\'s clusterIP:port from a ready function pod', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, fn('solo', 'solo'));
    await podUntil(kube, 'solo', 'Ready', isReady, 60_000);
    const { clusterIP } = await created(service('solo', 'solo'));
    expect(clusterIP).toMatch(/^127\.(17[6-9]|18\d|19[01])\./);
    await endpointsReady('solo', 1);
    expect(await until('an answer at the clusterIP', () => text(`http://${clusterIP}:8081/`).catch(() => undefined), { timeoutMs: 30_000 })).toBe('hello from solo');
  }, 120_000);

  it('shares connections between two ready pods, and stops choosing one whose readiness fails', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, fn('web-1', 'web'));
    await kube.create(Resources.pods, fn('web-2', 'web'));
    const { clusterIP } = await created(service('web', 'web'));
    await endpointsReady('web', 2);
    const url = `http://${clusterIP}:8081/`;
    await until('the proxy listening', () => text(url).catch(() => undefined), { timeoutMs: 30_000 });
    // The proxy's Endpoints informer may lag the API a moment: wait until both pods answer.
    const seen = new Set<string>();
    await until('both pods answering', async () => (seen.add(await text(url)), seen.size === 2), { timeoutMs: 30_000 });
    expect([...seen].sort()).toEqual(['hello from web-1', 'hello from web-2']);
    const turns = [await text(url), await text(url)];
    expect(turns.sort()).toEqual(['hello from web-1', 'hello from web-2']);
    const sick = await kube.raw({ method: 'GET', path: '/api/v1/namespaces/default/pods/web-1:8080/proxy/ready?set=false', accept: '*/*' });
    expect(sick.body).toBe('ready=false');
    await endpointsReady('web', 1);
    await until('web-1 no longer chosen', async () => [await text(url), await text(url)].every((t) => t === 'hello from web-2'), { timeoutMs: 30_000 });
    for (let i = 0; i < 4; i++) expect(await text(url)).toBe('hello from web-2');
  }, 120_000);

  it('keeps an established connection with its pod when it turns unready, as kube-proxy does; new ones go to the other', async () => {
    const { kube } = current;
    const setReady = async (pod: string, ready: boolean) =>
      (await kube.raw({ method: 'GET', path: `/api/v1/namespaces/default/pods/${pod}:8080/proxy/ready?set=${ready}`, accept: '*/*' })).body;
    expect(await setReady('web-1', true)).toBe('ready=true');
    await endpointsReady('web', 2);
    const { clusterIP } = (await kube.get<Obj>(Resources.services, 'web', { namespace: 'default' })).spec;
    const socket = connect(8081, clusterIP);
    let answer = '';
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    const ask = () => socket.write(`GET / HTTP/1.1\r\nhost: ${clusterIP}\r\nconnection: keep-alive\r\n\r\n`);
    ask();
    const pod = await until('the answer on the kept-alive connection', () => /hello from (web-\d)/.exec(answer)?.[1], { timeoutMs: 30_000 });
    expect(await setReady(pod, false)).toBe('ready=false');
    await endpointsReady('web', 1);
    const other = pod === 'web-1' ? 'web-2' : 'web-1';
    expect(await text(`http://${clusterIP}:8081/`)).toBe(`hello from ${other}`);
    ask();
    await until('the second answer on the same connection', () => (answer.match(/hello from web-\d/g) ?? []).length === 2, { timeoutMs: 30_000 });
    expect(answer.match(/hello from web-\d/g)).toEqual([`hello from ${pod}`, `hello from ${pod}`]);
    expect(socket.destroyed).toBe(false);
    socket.destroy();
    expect(await setReady(pod, true)).toBe('ready=true');
  }, 120_000);

  it('refuses a connection when no endpoint is ready', async () => {
    const { clusterIP } = await created(service('empty', 'nobody'));
    await until('the proxy listening', () => listening().includes(`${clusterIP}:8081`), { timeoutMs: 30_000 });
    await expect(text(`http://${clusterIP}:8081/`)).rejects.toThrow();
    expect(listening()).toContain(`${clusterIP}:8081`);
  }, 60_000);

  it('opens a NodePort on the node\'s address and closes a deleted Service\'s listeners', async () => {
    const { kube } = current;
    const { clusterIP, ports } = await created(service('np', 'solo', { type: 'NodePort' }));
    const nodePort = ports[0]!.nodePort!;
    await endpointsReady('np', 1);
    expect(await until('an answer at the node port', () => text(`http://127.0.0.1:${nodePort}/`).catch(() => undefined), { timeoutMs: 30_000 })).toBe('hello from solo');
    expect(await text(`http://${clusterIP}:8081/`)).toBe('hello from solo');
    await kube.delete(Resources.services, 'np', { namespace: 'default' });
    expect(listening()).toEqual(expect.arrayContaining([`${clusterIP}:8081`, `127.0.0.1:${nodePort}`]));
    await until('the clusterIP and node port closed', () => !listening().some((a) => a === `${clusterIP}:8081` || a === `127.0.0.1:${nodePort}`), { timeoutMs: 30_000 });
    expect(await accepts(clusterIP, 8081)).toBe(false);
    expect(await accepts('127.0.0.1', nodePort)).toBe(false);
  }, 120_000);

  it('logs a Service whose address is taken and goes on serving the others', async () => {
    const { kube, cluster } = current;
    const taken = '127.176.9.9';
    const squatter: Server = await new Promise((resolve) => { const s = createServer((c) => c.end('squatter\n')).listen(8081, taken, () => resolve(s)); });
    try {
      await created(service('clash', 'solo', { clusterIP: taken }));
      const warning = await until('the warning', () => cluster.logs.find((e) => e.msg === 'service proxy cannot listen' && e.service === 'default/clash'), { timeoutMs: 30_000 });
      expect(warning).toMatchObject({ level: 'warn', address: `${taken}:8081`, code: 'EADDRINUSE' });
      const { clusterIP } = await created(service('after', 'solo'));
      await endpointsReady('after', 1);
      expect(await until('the next Service answering', () => text(`http://${clusterIP}:8081/`).catch(() => undefined), { timeoutMs: 30_000 })).toBe('hello from solo');
      expect((await kube.get<Obj>(Resources.nodes, 'node-a')).status.conditions.find((c: Obj) => c.type === 'Ready').status).toBe('True');
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  }, 120_000);
});
