/**
 * `kubectl port-forward` (the real kubectl 1.32) against the API server, both ways kubectl speaks:
 * SPDY tunnelled in WebSocket (its default since 1.31) and the legacy SPDY upgrade
 * (KUBECTL_PORT_FORWARD_WEBSOCKETS=false). The pod network's dialer connects to a local HTTP server
 * standing in for the pod.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { get, request, createServer, type Server, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespace } from '../support/helpers.js';
import { portForward, runningPod, startStreamingCluster, type StreamingCluster } from '../support/streaming-helpers.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
/** Other kubectl releases on the CI image: 1.27–1.30 speak only the SPDY upgrade, 1.31+ try the WebSocket tunnel first. */
const sdkBin = '/usr/lib/google-cloud-sdk/bin';
const otherKubectls = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.33'].map((v) => [v, `${sdkBin}/kubectl.${v}`] as const).filter(([, bin]) => existsSync(bin));

/** The same bytes on both sides without holding them: a 1 MiB block, numbered per MiB. */
const block = createHash('sha512').update('seed').digest();
function mib(i: number): Buffer {
  const out = Buffer.alloc(1024 * 1024);
  for (let at = 0; at < out.length; at += block.length) block.copy(out, at);
  out.writeUInt32BE(i, 0);
  return out;
}
const expectedSha = (n: number) => {
  const h = createHash('sha256');
  for (let i = 0; i < n; i++) h.update(mib(i));
  return h.digest('hex');
};

/** The stand-in pod: /hello, /sum (hash of the body), /bytes?mib=N, /close (drops the connection), /stream (endless). */
function standIn(name: string): Server {
  return createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pod');
    if (url.pathname === '/sum') {
      const h = createHash('sha256');
      let length = 0;
      req.on('data', (c: Buffer) => (h.update(c), (length += c.length)));
      req.on('end', () => res.end(JSON.stringify({ sha256: h.digest('hex'), length })));
      return;
    }
    if (url.pathname === '/bytes') {
      const n = Number(url.searchParams.get('mib'));
      let i = 0;
      const pump = () => {
        while (i < n) if (!res.write(mib(i++))) return void res.once('drain', pump);
        res.end();
      };
      return pump();
    }
    if (url.pathname === '/close') return void req.socket.destroy();
    if (url.pathname === '/stream') {
      const pump = () => {
        while (res.write(mib(0))) if (res.destroyed) return;
        res.once('drain', pump);
      };
      return pump();
    }
    res.end(`hello from ${name} ${url.pathname}${url.search}`);
  });
}

const fetchText = (port: number, path: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });

function upload(port: number, n: number): Promise<{ sha256: string; length: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/sum', method: 'POST', agent: false }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    let i = 0;
    const pump = () => {
      while (i < n) if (!req.write(mib(i++))) return void req.once('drain', pump);
      req.end();
    };
    pump();
  });
}

function download(port: number, n: number): Promise<{ sha256: string; length: number }> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: `/bytes?mib=${n}`, agent: false }, (res: IncomingMessage) => {
      const h = createHash('sha256');
      let length = 0;
      res.on('data', (c: Buffer) => (h.update(c), (length += c.length)));
      res.on('end', () => resolve({ sha256: h.digest('hex'), length }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

const openConnections = (s: Server) => new Promise<number>((resolve) => s.getConnections((_e, n) => resolve(n)));

describe.runIf(existsSync(kubectlBin))('kubectl port-forward', () => {
  let c: StreamingCluster;
  let pod: Server;
  let podPort = 0;
  beforeAll(async () => {
    pod = standIn('web');
    await new Promise<void>((r) => pod.listen(0, '127.0.0.1', r));
    podPort = (pod.address() as AddressInfo).port;
    c = await startStreamingCluster((p, port) => (port === 8080 && String(p.metadata.name).startsWith('web') ? podPort : undefined));
    expect((await c.api('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
    const spec = { containers: [{ name: 'app', image: 'func', ports: [{ name: 'http', containerPort: 8080 }] }] };
    await runningPod(c, 'shop', 'web', spec, { app: 'web' });
    const svc = await c.api('POST', '/api/v1/namespaces/shop/services', {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    expect(svc.status).toBe(201);
    const pending = await c.api('POST', '/api/v1/namespaces/shop/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'pending' }, spec });
    expect(pending.status).toBe(201);
    await runningPod(c, 'shop', 'unscheduled-web', { ...spec, nodeName: '' });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    await new Promise((r) => pod?.close(r));
  });

  describe.each([
    ['SPDY tunnelled in WebSocket (the default)', {}, /negotiated protocol: portforward\.k8s\.io/],
    ['the legacy SPDY upgrade', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }, /POST https:\/\/127\.0\.0\.1:\d+\/api\/v1\/namespaces\/shop\/pods\/web\/portforward 101 Switching Protocols/],
  ])('over %s', (_name, env: NodeJS.ProcessEnv, upgradeLine) => {
    it('forwards a local port kubectl picks to the pod, connection after connection', async () => {
      const pf = await portForward(c, ['-n', 'shop', 'pod/web', '0:8080', '-v=6'], { env });
      try {
        for (let i = 0; i < 3; i++) expect(await fetchText(pf.port, `/hello?i=${i}`)).toEqual({ status: 200, body: `hello from web /hello?i=${i}` });
        expect(pf.output()).toMatch(upgradeLine);
        expect(pf.output()).not.toMatch(/fallback to secondary dialer/);
      } finally {
        await pf.stop();
      }
    });

    it('carries many connections at once', async () => {
      const pf = await portForward(c, ['-n', 'shop', 'pod/web', '0:8080'], { env });
      try {
        const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => fetchText(pf.port, `/hello?n=${i}`)));
        expect(answers.map((a) => a.body)).toEqual(Array.from({ length: 50 }, (_, i) => `hello from web /hello?n=${i}`));
      } finally {
        await pf.stop();
      }
    });

    it('moves 50 MB each way intact', async () => {
      const pf = await portForward(c, ['-n', 'shop', 'pod/web', '0:8080'], { env });
      try {
        const want = { sha256: expectedSha(50), length: 50 * 1024 * 1024 };
        expect(await upload(pf.port, 50)).toEqual(want);
        expect(await download(pf.port, 50)).toEqual(want);
      } finally {
        await pf.stop();
      }
    }, 120_000);

    it('survives the pod dropping a connection and kubectl being killed mid-transfer', async () => {
      const pf = await portForward(c, ['-n', 'shop', 'pod/web', '0:8080'], { env });
      await expect(fetchText(pf.port, '/close')).rejects.toThrow();
      expect((await fetchText(pf.port, '/hello')).body).toBe('hello from web /hello');
      const received = await new Promise<number>((resolve) => {
        get({ host: '127.0.0.1', port: pf.port, path: '/stream', agent: false }, (res) => {
          let n = 0;
          res.on('data', (d: Buffer) => {
            n += d.length;
            if (n > 5 * 1024 * 1024) resolve(n);
          });
          res.on('error', () => undefined);
        }).on('error', () => undefined);
      });
      expect(received).toBeGreaterThan(5 * 1024 * 1024);
      expect(await openConnections(pod)).toBeGreaterThan(0);
      await pf.stop('SIGKILL');
      // The server lets go of the pod connections and stays up for the next client.
      await until('pod connections closed', async () => (await openConnections(pod)) === 0, { timeoutMs: 15_000 });
      expect((await c.api('GET', '/healthz')).status).toBe(200);
      const again = await portForward(c, ['-n', 'shop', 'pod/web', '0:8080'], { env });
      expect((await fetchText(again.port, '/hello')).body).toBe('hello from web /hello');
      await again.stop();
    }, 60_000);

    it('tells kubectl when nothing listens on the pod port', async () => {
      const pf = await portForward(c, ['-n', 'shop', 'pod/web', '0:9999'], { env });
      await expect(fetchText(pf.port, '/hello')).rejects.toThrow();
      await until('the error on kubectl’s output', () => /error forwarding port 9999 to pod web, uid [0-9a-f-]+: connect: connection refused/.test(pf.output()), { timeoutMs: 15_000 });
      await pf.stop();
    });
  });

  it.each(otherKubectls)('works with kubectl %s as it connects by default', async (version, bin) => {
    const pf = await portForward(c, ['-n', 'shop', 'pod/web', '0:8080', '-v=6'], { bin });
    try {
      expect(await fetchText(pf.port, `/v${version}`)).toEqual({ status: 200, body: `hello from web /v${version}` });
      const websocket = Number(version.split('.')[1]) >= 31;
      expect(pf.output()).toMatch(websocket ? /negotiated protocol: portforward\.k8s\.io/ : /POST https:\S+\/portforward 101 Switching Protocols/);
      expect(pf.output()).not.toMatch(/fallback to secondary dialer/);
    } finally {
      await pf.stop();
    }
  });

  it('forwards svc/… to the port its target port names on the pod kubectl picks', async () => {
    const pf = await portForward(c, ['-n', 'shop', 'svc/web', '0:80']);
    try {
      expect(pf.output()).toMatch(/-> 8080/);
      expect(await fetchText(pf.port, '/via-service')).toEqual({ status: 200, body: 'hello from web /via-service' });
    } finally {
      await pf.stop();
    }
  });

  it('is refused by kubectl for a pod that is not running, and by the server for one with no node', async () => {
    const pending = await c.kubectl(['port-forward', '-n', 'shop', 'pod/pending', '0:8080']);
    expect(pending.code).not.toBe(0);
    expect(pending.stderr).toMatch(/unable to forward port because pod is not running. Current status=Pending/);
    const unscheduled = await c.kubectl(['port-forward', '-n', 'shop', 'pod/unscheduled-web', '0:8080']);
    expect(unscheduled.code).not.toBe(0);
    expect(unscheduled.stderr).toMatch(/pod unscheduled-web does not have a host assigned/);
  });
});
