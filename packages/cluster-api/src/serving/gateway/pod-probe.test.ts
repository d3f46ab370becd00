import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../../../testing/src/poll.js';
import { directlyProbed, PodProber, type RevisionProbe } from './pod-probe.js';

const servers: Server[] = [];
const probers: PodProber[] = [];
afterEach(async () => {
  for (const p of probers.splice(0)) p.stop();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A pod's address: a port taken, then freed, so nothing listens there until `listen` is called. */
async function pod(answer: (path: string) => number = () => 200): Promise<{ port: number; listen(): Promise<void>; hits: string[]; paths: string[] }> {
  const hits: string[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => (hits.push(String(req.headers['user-agent'])), paths.push(req.url!), res.writeHead(answer(req.url!)).end()));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return { port, hits, paths, listen: () => new Promise<void>((r) => server.listen(port, '127.0.0.1', r)) };
}

const container = { name: 'user-container', ports: [{ name: 'user-port', containerPort: 8080 }] };
const tcp = (extra = {}): RevisionProbe => ({ probe: { tcpSocket: { port: 8080 }, ...extra }, container, port: 8080 });
const http = (extra = {}): RevisionProbe => ({ probe: { httpGet: { path: '/ready', port: 'user-port' }, ...extra }, container, port: 8080 });
/** The readiness probe httpGet /ready, the container's startup probe `startupProbe`. */
const started = (startupProbe: unknown): RevisionProbe => ({ ...http(), container: { ...container, startupProbe } as never });

function prober(): { p: PodProber; healthy: string[] } {
  const healthy: string[] = [];
  const p = new PodProber({ healthy: (key) => healthy.push(key) });
  probers.push(p);
  return { p, healthy };
}

describe('the activator\'s own readiness probes', () => {
  it('probes a pod listed not ready while a request waits, and takes it at its first answer', async () => {
    const { p, healthy } = prober();
    const a = await pod();
    const addr = { ip: '127.0.0.1', port: a.port };
    expect(p.update('ns/r', [addr], tcp(), true)).toEqual([]);
    await a.listen();
    await until('the pod answered its probe', () => healthy.length > 0);
    expect(healthy).toEqual(['ns/r']);
    expect(p.update('ns/r', [addr], tcp(), true)).toEqual([addr]);
    // Listed ready, then not ready again: the Endpoints decide from then on, until a request waits.
    expect(p.update('ns/r', [], tcp(), false)).toEqual([]);
    expect(p.update('ns/r', [addr], tcp(), false)).toEqual([]);
  });

  it('runs the revision\'s httpGet probe (named port, kube-probe agent): a failing status is not ready, successThreshold counts', async () => {
    const { p, healthy } = prober();
    let status = 503;
    const a = await pod(() => status);
    await a.listen();
    const addr = { ip: '127.0.0.1', port: a.port };
    p.update('ns/r', [addr], http({ successThreshold: 2 }), true);
    await until('tries answered 503', () => a.hits.length >= 2);
    expect(healthy).toEqual([]);
    expect(p.update('ns/r', [addr], http({ successThreshold: 2 }), true)).toEqual([]);
    status = 200;
    await until('the pod answered twice in a row', () => healthy.length > 0);
    expect(a.hits.every((h) => h.startsWith('kube-probe/'))).toBe(true);
    expect(p.update('ns/r', [addr], http({ successThreshold: 2 }), true)).toEqual([addr]);
  });

  it('starts no probe when no request waits, and stops one whose pod left the Endpoints', async () => {
    const { p } = prober();
    const a = await pod();
    await a.listen();
    const addr = { ip: '127.0.0.1', port: a.port };
    expect(p.update('ns/r', [addr], http(), false)).toEqual([]);
    expect(a.hits).toEqual([]);
    const b = await pod(() => 503);
    await b.listen();
    const gone = { ip: '127.0.0.1', port: b.port };
    p.update('ns/r', [gone], http(), true);
    await until('the pod was probed', () => b.hits.length > 0);
    p.update('ns/r', [], http(), true);
    const seen = b.hits.length;
    // Another pod, still not ready, probed five more times meanwhile: the one that left got at most the try in flight.
    const other = await pod(() => 503);
    await other.listen();
    p.update('ns/other', [{ ip: '127.0.0.1', port: other.port }], http(), true);
    await until('five tries of the other pod', () => other.hits.length >= 5);
    expect(b.hits.length).toBeLessThanOrEqual(seen + 1);
  });

  it('leaves to the Endpoints a probe it cannot run as the kubelet would: exec, grpc, another port or host, no handler', async () => {
    for (const probe of [
      { exec: { command: ['true'] } },
      { grpc: { port: 8080 } },
      { tcpSocket: { port: 9090 } },
      { httpGet: { port: 'metrics' } },
      { httpGet: { port: 8080, host: '10.0.0.1' } },
      {},
    ]) {
      expect(directlyProbed({ probe: probe as never, container, port: 8080 }), JSON.stringify(probe)).toBe(false);
    }
    expect(directlyProbed(tcp())).toBe(true);
    expect(directlyProbed(http())).toBe(true);
    const { p } = prober();
    expect(p.update('ns/r', [{ ip: '127.0.0.1', port: 1 }], { probe: { exec: { command: ['true'] } }, container, port: 8080 }, true)).toEqual([]);
    expect(p.update('ns/r', [{ ip: '127.0.0.1', port: 1 }], undefined, true)).toEqual([]);
  });

  it('runs a container\'s startup probe first: not ready, its readiness not even probed, until the startup probe succeeds', async () => {
    const { p, healthy } = prober();
    let startedUp = false;
    // Its readiness path answers 200 from the start: only the startup probe holds it back.
    const a = await pod((path) => (path === '/started' ? (startedUp ? 200 : 503) : 200));
    await a.listen();
    const addr = { ip: '127.0.0.1', port: a.port };
    // The startup probe names no port: the user container's.
    const r = started({ httpGet: { path: '/started' }, failureThreshold: 30 });
    p.update('ns/r', [addr], r, true);
    await until('five failed startup probes', () => a.paths.length >= 5);
    expect(healthy).toEqual([]);
    expect(p.update('ns/r', [addr], r, true)).toEqual([]);
    expect(new Set(a.paths)).toEqual(new Set(['/started']));
    startedUp = true;
    await until('started, then ready', () => healthy.length > 0);
    expect(p.update('ns/r', [addr], r, true)).toEqual([addr]);
    // Once started, the startup probe is not run again: readiness decides.
    const last = a.paths.lastIndexOf('/started');
    expect(a.paths.slice(last + 1)).toEqual(['/ready']);
    expect(a.hits.every((h) => h.startsWith('kube-probe/'))).toBe(true);
  });

  it('a tcpSocket startup probe: a pod that does not listen yet has not started', async () => {
    const { p, healthy } = prober();
    const a = await pod();
    const addr = { ip: '127.0.0.1', port: a.port };
    const r = started({ tcpSocket: { port: 'user-port' } });
    expect(directlyProbed(r)).toBe(true);
    p.update('ns/r', [addr], r, true);
    await a.listen();
    await until('started and ready', () => healthy.length > 0);
    expect(a.paths).toEqual(['/ready']);
  });

  it('leaves to the Endpoints a pod whose startup probe it cannot run (exec, grpc, another port or host, no handler): never probed, never taken', async () => {
    for (const startup of [
      { exec: { command: ['true'] } },
      { grpc: { port: 8080 } },
      { tcpSocket: { port: 9090 } },
      { httpGet: { path: '/started', port: 8080, host: '10.0.0.1' } },
      {},
    ]) {
      expect(directlyProbed(started(startup)), JSON.stringify(startup)).toBe(false);
      const { p, healthy } = prober();
      const a = await pod();
      await a.listen();
      const addr = { ip: '127.0.0.1', port: a.port };
      expect(p.update('ns/r', [addr], started(startup), true)).toEqual([]);
      // A pod that is probed gets its first probe at once: this one had none, as its readiness probe would pass.
      const other = await pod();
      await other.listen();
      p.update('ns/other', [{ ip: '127.0.0.1', port: other.port }], http(), true);
      await until('the other pod probed and taken', () => healthy.includes('ns/other'));
      expect(a.hits).toEqual([]);
      expect(p.update('ns/r', [addr], started(startup), true)).toEqual([]);
    }
  });
});
