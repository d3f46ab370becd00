/**
 * Port-forward from the clients that speak the kubelet's own WebSocket protocol (channels, one
 * WebSocket per connection): @kubernetes/client-node's PortForward and the Python client's
 * `portforward` (Debian's python3-kubernetes). A local HTTP server stands in for the pod.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, get, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig, PortForward } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { namespace, TestToken } from '../support/helpers.js';
import { runningPod, startStreamingCluster, type StreamingCluster } from '../support/streaming-helpers.js';

const python = '/usr/bin/python3';

describe('port-forward over the kubelet’s WebSocket channels', () => {
  let c: StreamingCluster;
  let pod: Server;
  let local: NetServer | undefined;
  beforeAll(async () => {
    pod = createServer((req, res) => res.end(`hello from web ${req.url}`));
    await new Promise<void>((r) => pod.listen(0, '127.0.0.1', r));
    const podPort = (pod.address() as AddressInfo).port;
    c = await startStreamingCluster((_p, port) => (port === 8080 ? podPort : undefined));
    expect((await c.api('POST', '/api/v1/namespaces', namespace('shop'))).status).toBe(201);
    await runningPod(c, 'shop', 'web', { containers: [{ name: 'app', image: 'func', ports: [{ containerPort: 8080 }] }] });
  }, 60_000);
  afterAll(async () => {
    local?.close();
    await c?.close();
    await new Promise((r) => pod?.close(r));
  });

  it('serves client-node’s PortForward, one WebSocket per local connection', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(join(c.dir, 'kubeconfig.yaml'));
    const forward = new PortForward(kc);
    local = createNetServer((socket) => void forward.portForward('shop', 'web', [8080], socket, null, socket));
    await new Promise<void>((r) => local!.listen(0, '127.0.0.1', r));
    const port = (local.address() as AddressInfo).port;
    for (const path of ['/one', '/two']) {
      const body = await new Promise<string>((resolve, reject) => {
        get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve(text));
        }).on('error', reject);
      });
      expect(body).toBe(`hello from web ${path}`);
    }
  });

  it.runIf(existsSync(python))('serves the Python client’s portforward', async () => {
    const script = [
      'import sys',
      'from kubernetes import config, client',
      'from kubernetes.stream import portforward',
      'config.load_kube_config(config_file=sys.argv[1])',
      "pf = portforward(client.CoreV1Api().connect_get_namespaced_pod_portforward, 'web', 'shop', ports='8080')",
      'sock = pf.socket(8080)',
      'sock.setblocking(True)',
      "sock.sendall(b'GET /from-python HTTP/1.1\\r\\nHost: pod\\r\\nConnection: close\\r\\n\\r\\n')",
      "data = b''",
      'while True:',
      '    chunk = sock.recv(4096)',
      '    if not chunk: break',
      '    data += chunk',
      "print(data.decode().split('\\r\\n\\r\\n', 1)[1])",
      "print('error:', pf.error(8080))",
    ].join('\n');
    const { stdout } = await promisify(execFile)(python, ['-c', script, join(c.dir, 'kubeconfig.yaml')], { env: { HOME: c.dir, PATH: process.env.PATH }, timeout: 30_000 });
    expect(stdout).toBe('hello from web /from-python\nerror: None\n');
  });

  /** A raw WebSocket client: `ws` accepts the channel subprotocols (they are plain tokens). */
  const open = (query: string, protocol = 'v4.channel.k8s.io') =>
    new WebSocket(`${c.server.url.replace('https', 'wss')}/api/v1/namespaces/shop/pods/web/portforward${query}`, protocol ? [protocol] : [], {
      ca: c.tls.ca,
      headers: { authorization: `Bearer ${TestToken}` },
    });

  it('speaks base64 channels too, and names each channel’s port first', async () => {
    const ws = open('?ports=8080', 'v4.base64.channel.k8s.io');
    const messages: string[] = [];
    ws.on('message', (m) => messages.push(String(m)));
    await new Promise((r) => ws.once('open', r));
    expect(ws.protocol).toBe('v4.base64.channel.k8s.io');
    ws.send('0' + Buffer.from('GET /b64 HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n').toString('base64'));
    await new Promise((r) => ws.once('close', r));
    const port = Buffer.from([8080 & 0xff, 8080 >> 8]).toString('base64');
    expect(messages.slice(0, 2)).toEqual([`0${port}`, `1${port}`]);
    const body = messages.slice(2).filter((m) => m[0] === '0').map((m) => Buffer.from(m.slice(1), 'base64').toString()).join('');
    expect(body).toMatch(/\r\n\r\nhello from web \/b64$/);
  });

  it('says on the error channel that nothing listens on a port, then closes', async () => {
    const ws = open('?ports=9999');
    const messages: Buffer[] = [];
    ws.on('message', (m: Buffer) => messages.push(m));
    const code = await new Promise<number>((r) => ws.once('close', r));
    expect(code).toBe(1000);
    const errors = messages.filter((m) => m[0] === 1).map((m) => m.subarray(1));
    expect(errors[0]).toEqual(Buffer.from([9999 & 0xff, 9999 >> 8]));
    expect(errors[1]!.toString()).toMatch(/^error forwarding port 9999 to pod web, uid [0-9a-f-]+: connect: connection refused$/);
  });

  it.each([
    ['', 400, 'query parameter "port" is required'],
    ['?ports=', 400, 'query parameter "port" cannot be empty'],
    ['?ports=http', 400, 'unable to parse "http" as a port'],
    ['?ports=0', 400, 'port "0" must be > 0'],
    ['?ports=8080', 403, 'unable to upgrade: unable to negotiate protocol: client supports [v5.channel.k8s.io], server accepts [v4.channel.k8s.io v4.base64.channel.k8s.io]'],
  ])('refuses ports %j with %i before switching', async (query, code, message) => {
    const ws = open(query, query === '?ports=8080' ? 'v5.channel.k8s.io' : 'v4.channel.k8s.io');
    const refused = await new Promise<{ statusCode?: number; body: string }>((resolve) => {
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ statusCode: res.statusCode, body }));
      });
      ws.once('error', () => undefined);
    });
    expect(refused.statusCode).toBe(code);
    expect(JSON.parse(refused.body)).toMatchObject({ kind: 'Status', code, message });
  });
});
