/**
 * The agent's kubelet server: HTTPS with a certificate the cluster CA signed, clients authenticated
 * and authorized as the kubelet does it (server-auth.ts). It serves what the API server reaches
 * nodes for:
 *
 * - `GET /containerLogs/{namespace}/{pod}/{container}` — `kubectl logs` (follow, tailLines, tail,
 *   sinceSeconds, sinceTime, timestamps, previous, limitBytes), with the kubelet's answers;
 * - `POST /tunnel/{namespace}/{pod}/{port}` with `Upgrade: tcp` — a byte stream to the pod's port
 *   (101 Switching Protocols, then raw TCP): what port-forward and pods/proxy ride on, across machines;
 * - `/exec/{namespace}/{pod}/{container}?command=…&input=1&output=1&error=1&tty=1` and `/attach/…`
 *   (upgrades: WebSocket channels or SPDY) — `kubectl exec`, `cp`, `attach` (container-streams.ts);
 * - `GET /pods` (the pods this node runs, as a PodList) and `GET /healthz`;
 * - `GET /metrics/resource` — the containers', pods' and node's CPU and memory usage as Prometheus
 *   text (stats/resource-metrics.ts), authorized as get on nodes/metrics: what the metrics API scrapes.
 */
import { createServer, type Server } from 'node:https';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { readContainerLog, type LogReadOptions } from '../logs/log-reader.js';
import type { PodWorker } from '../pods/pod-worker.js';
import { DialErrorHeader } from '../kubelet-client.js';
import { KubeletAuth, type KubeletUser } from './server-auth.js';
import { serveContainerStream } from './container-streams.js';
import type { Pod } from '../types.js';
import { resourceMetricsText, type ResourceSample } from '../stats/resource-metrics.js';

export interface KubeletHost {
  worker(namespace: string, name: string): PodWorker | undefined;
  pods(): Pod[];
  /** The usage of the node and its running containers now. */
  resources(): ResourceSample;
}

export interface KubeletServerOptions {
  cert: string | Buffer;
  key: string | Buffer;
  /** The cluster CA: client certificates are checked against it. */
  ca: string | Buffer;
  host?: string;
  port?: number;
}

class HttpError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

const text = (res: ServerResponse, code: number, body: string) =>
  void res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(body);

const int = (q: URLSearchParams, name: string): number | undefined => {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw new HttpError(400, '{"message": "Unable to decode query."}');
  return Number(v);
};

const bool = (q: URLSearchParams, name: string): boolean => ['true', '1', 'True', 'TRUE', 't', 'T'].includes(q.get(name) ?? '');

/** PodLogOptions from the query, checked as ValidatePodLogOptions checks them. */
export function logOptions(q: URLSearchParams): LogReadOptions & { previous: boolean } {
  const tail = q.get('tail');
  const tailLines = tail === 'all' ? undefined : tail !== null && tail !== '' ? int(new URLSearchParams({ tail }), 'tail') : int(q, 'tailLines');
  const sinceSeconds = int(q, 'sinceSeconds');
  const sinceText = q.get('sinceTime');
  const sinceTime = sinceText ? Date.parse(sinceText) : undefined;
  const limitBytes = int(q, 'limitBytes');
  if (Number.isNaN(sinceTime)) throw new HttpError(400, '{"message": "Unable to decode query."}');
  const invalid = (tailLines !== undefined && tailLines < 0) || (limitBytes !== undefined && limitBytes < 1) || (sinceSeconds !== undefined && sinceSeconds < 1) || (sinceSeconds !== undefined && sinceTime !== undefined);
  if (invalid) throw new HttpError(422, '{"message": "Invalid request."}');
  return {
    tailLines, limitBytes, timestamps: bool(q, 'timestamps'), follow: bool(q, 'follow'), previous: bool(q, 'previous'),
    sinceTime: sinceSeconds !== undefined ? Date.now() - sinceSeconds * 1000 : sinceTime,
  };
}

export class KubeletServer {
  private readonly server: Server;
  private readonly sockets = new Set<Duplex>();

  constructor(private readonly host: KubeletHost, private readonly auth: KubeletAuth, private readonly opts: KubeletServerOptions) {
    // Half-open tunnels: the API server's side may end its writing while the pod still answers.
    this.server = createServer({ cert: opts.cert, key: opts.key, ca: opts.ca, requestCert: true, rejectUnauthorized: false, allowHalfOpen: true }, (req, res) => void this.handle(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void this.upgrade(req, socket, head));
    this.server.on('connection', (s: Socket) => (this.sockets.add(s), s.once('close', () => this.sockets.delete(s))));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve, reject) => this.server.once('error', reject).listen(this.opts.port ?? 0, this.opts.host ?? '127.0.0.1', () => resolve()));
    return (this.server.address() as AddressInfo).port;
  }

  private async admit(req: IncomingMessage, path: string): Promise<KubeletUser> {
    const user = await this.auth.authenticate(req);
    if (!user) throw new HttpError(401, 'Unauthorized');
    if (!(await this.auth.authorize(user, req.method ?? 'GET', path))) throw new HttpError(403, KubeletAuth.forbidden(user, req.method ?? 'GET', path));
    return user;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://kubelet');
    try {
      await this.admit(req, url.pathname);
      const parts = url.pathname.split('/').slice(1).map(decodeURIComponent);
      if (url.pathname === '/healthz') return text(res, 200, 'ok');
      if (url.pathname === '/pods' || url.pathname === '/pods/') {
        const body = JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: this.host.pods() });
        return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
      }
      if (url.pathname === '/metrics/resource' && (req.method === 'GET' || req.method === 'HEAD')) {
        const body = resourceMetricsText(this.host.resources());
        return void res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8', 'Content-Length': Buffer.byteLength(body) }).end(req.method === 'HEAD' ? undefined : body);
      }
      if (parts[0] === 'containerLogs' && parts.length === 4 && (req.method === 'GET' || req.method === 'HEAD')) return await this.logs(req, res, parts[1]!, parts[2]!, parts[3]!, url.searchParams);
      throw new HttpError(404, '404 page not found');
    } catch (err) {
      const e = err instanceof HttpError ? err : new HttpError(500, 'Internal Error');
      if (!res.headersSent) text(res, e.code, e.message);
      else res.end();
    }
  }

  private async logs(req: IncomingMessage, res: ServerResponse, namespace: string, name: string, container: string, q: URLSearchParams): Promise<void> {
    const options = logOptions(q);
    const worker = this.host.worker(namespace, name);
    if (!worker) throw new HttpError(404, `pod "${name}" does not exist`);
    const runner = worker.container(container);
    if (!runner) throw new HttpError(404, `container "${container}" not found in pod "${name}"`);
    const source = runner.logSource(options.previous);
    if ('error' in source) throw new HttpError(400, source.error);
    const abort = new AbortController();
    res.once('close', () => abort.abort());
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    // The answer starts once the log's starting point is fixed: a client that writes after it sees the headers gets that line.
    await readContainerLog(source.file, { ...options, signal: abort.signal, started: () => res.flushHeaders() }, res, source.live);
    res.end();
  }

  /** `/tunnel/{namespace}/{pod}/{port}`: authorized as create on nodes/proxy, then raw bytes both ways. */
  private async upgrade(req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
    const refuse = (code: number, message: string, errno?: string) => void socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? 'Error'}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\n${errno ? `${DialErrorHeader}: ${errno}\r\n` : ''}Connection: close\r\n\r\n${message}`);
    socket.on('error', () => undefined);
    try {
      const url = new URL(req.url ?? '/', 'https://kubelet');
      await this.admit(req, url.pathname);
      const [kind, namespace, name, portText] = url.pathname.split('/').slice(1).map(decodeURIComponent);
      if ((kind === 'exec' || kind === 'attach') && url.pathname.split('/').length === 5) {
        const target = { worker: this.host.worker(namespace!, name!), pod: name!, container: portText!, query: url.searchParams };
        return await serveContainerStream(kind, req, socket, head, target, refuse);
      }
      if (kind !== 'tunnel' || !/^\d+$/.test(portText ?? '') || (req.headers.upgrade ?? '').toLowerCase() !== 'tcp') return refuse(404, '404 page not found');
      const worker = this.host.worker(namespace!, name!);
      const target = worker?.target(Number(portText));
      if (!target?.host) return refuse(404, `pod "${name}" does not exist`);
      const upstream = connect({ ...target, allowHalfOpen: true });
      upstream.once('error', (err: NodeJS.ErrnoException) => refuse(502, `dial tcp ${target.host}:${target.port}: ${err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.message}`, err.code));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(socket).pipe(upstream);
        const end = () => (upstream.destroy(), socket.destroy());
        upstream.once('error', end).once('close', end);
        socket.once('close', end);
      });
    } catch (err) {
      refuse(err instanceof HttpError ? err.code : 502, err instanceof HttpError ? err.message : 'Bad Gateway');
    }
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}
