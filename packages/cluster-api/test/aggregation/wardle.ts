/**
 * A small extension API server for the aggregation tests, as sample-apiserver ("wardle") is one:
 * HTTPS on 127.0.0.1:0 with a certificate for `<service>.<namespace>.svc`, it serves
 * `/apis/wardle.example.com/v1alpha1` discovery and a namespaced list of `flunders`, and believes a
 * request only when it comes with a client certificate from the front-proxy CA whose CN is an allowed
 * name (what `extension-apiserver-authentication` tells it); then it records X-Remote-User/-Group.
 */
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { ensureCa, issueCertificate } from '../../src/auth/tls.js';

export const Group = 'wardle.example.com';
export const Version = 'v1alpha1';

export interface Seen {
  path: string;
  user: string | undefined;
  groups: string[];
  extra: Record<string, string | string[] | undefined>;
  authorization: string | undefined;
}

export interface Wardle {
  port: number;
  /** PEM of the CA the serving certificate chains to (the APIService's caBundle). */
  ca: string;
  /** Every request that was believed. */
  seen: Seen[];
  /** Requests refused for their client certificate. */
  refused: number;
  close(): Promise<void>;
}

export interface WardleAuthentication {
  /** `requestheader-client-ca-file` of the ConfigMap. */
  clientCa: string;
  /** `requestheader-allowed-names`. */
  allowedNames: string[];
}

const resourceList = {
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion: `${Group}/${Version}`,
  resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list'] }],
};

const flunders = (namespace: string) => ({
  kind: 'FlunderList',
  apiVersion: `${Group}/${Version}`,
  metadata: { resourceVersion: '1' },
  items: [{ kind: 'Flunder', apiVersion: `${Group}/${Version}`, metadata: { name: 'mellow', namespace, creationTimestamp: '2026-01-01T00:00:00Z' } }],
});

export async function startWardle(dir: string, host: string, auth: WardleAuthentication): Promise<Wardle> {
  const ca = ensureCa(dir);
  const serving = issueCertificate(ca, { commonName: host, hosts: [host], usages: ['server'] });
  const seen: Seen[] = [];
  let refused = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer({ ...serving, ca: auth.clientCa, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const socket = req.socket as TLSSocket;
    const peer = socket.getPeerX509Certificate?.();
    const cn = peer && /(?:^|\n)CN=([^\n]+)/.exec(peer.subject)?.[1];
    if (!socket.authorized || !peer || !cn || !auth.allowedNames.includes(cn) || !(peer instanceof X509Certificate)) {
      refused++;
      res.writeHead(401, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401 }));
    }
    const groups = req.headersDistinct['x-remote-group'] ?? [];
    const extra = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-remote-extra-')));
    const path = (req.url ?? '/').split('?')[0]!;
    seen.push({ path, user: req.headers['x-remote-user'] as string | undefined, groups, extra, authorization: req.headers.authorization });
    const send = (code: number, body: object) => (res.writeHead(code, { 'content-type': 'application/json' }), res.end(JSON.stringify(body)));
    if (path === `/apis/${Group}/${Version}`) return send(200, resourceList);
    const list = new RegExp(`^/apis/${Group}/${Version}/namespaces/([^/]+)/flunders$`).exec(path);
    if (list && /[?&]watch=(1|true)/.test(req.url ?? '')) {
      // A watch: the one flunder ADDED, then the stream stays open until the client goes.
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      return void res.write(`${JSON.stringify({ type: 'ADDED', object: flunders(list[1]!).items[0] })}\n`);
    }
    if (list) return send(200, flunders(list[1]!));
    send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
  });
  // An upgrade (as `kubectl exec` into an extension's resource would make): switched, then every byte echoed, after the user it came as.
  server.on('upgrade', (req, socket: Socket) => {
    const trusted = (socket as TLSSocket).authorized;
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n${trusted ? String(req.headers['x-remote-user']) : 'untrusted'}\n`);
    socket.pipe(socket);
  });
  server.on('connection', (s: Socket) => (sockets.add(s), s.once('close', () => sockets.delete(s))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca: ca.cert,
    seen,
    get refused() {
      return refused;
    },
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    }),
  };
}
