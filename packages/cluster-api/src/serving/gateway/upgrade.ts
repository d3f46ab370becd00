/**
 * Upgrades through the gateway (websockets, Knative's gateway and activator pass them on): an
 * HTTP/1.1 request with `Upgrade` is sent to the chosen pod as it came (with `Connection: upgrade`
 * and its `Upgrade` kept, the forwarded headers added); the pod's `101 Switching Protocols` is
 * relayed to the client as the pod wrote it, and from then on the two sockets are piped to each
 * other, raw, until either end closes. A pod that answers something else (it refused the upgrade)
 * has that answer relayed, and the connection closes after it; a pod that cannot be reached is a
 * 502 on the socket, no 101 within the revision's timeout a 504. Answers before an upgrade are
 * written on the socket itself (there is no HTTP response object for an upgrade request).
 */
import { request, STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';

/** A plain-text answer as HTTP/1.1 bytes; `close`: the connection closes after it. */
export const plainAnswer = (code: number, text: string, close: boolean): string =>
  `HTTP/1.1 ${code} ${STATUS_CODES[code] ?? ''}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${close ? 'connection: close\r\n' : ''}\r\n${text}`;

/** An answer written on the socket of a request that asked for an upgrade; the connection closes after it. */
export function answerOnSocket(socket: Duplex, code: number, text: string): void {
  if (socket.destroyed || socket.writableEnded) return;
  socket.end(plainAnswer(code, text, true));
}

/** A response head as HTTP/1.1 text, from the header names and values in the order received. */
const responseHead = (code: number, message: string, rawHeaders: string[]): string => {
  let head = `HTTP/1.1 ${code} ${message}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
};

export interface UpgradeTarget {
  ip: string;
  port: number;
  /** What the pod gets: the request's headers as a proxy passes them on (the forwarded ones added). */
  headers: IncomingHttpHeaders;
  /** The longest the pod may take to answer the upgrade. */
  timeoutMs: number;
}

/**
 * Forwards the upgrade request `req` (its `socket`, and `head`: what the client sent after the
 * request's head) to a pod; `done` is called once, when the connection is over.
 */
export function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, to: UpgradeTarget, done: () => void): void {
  let over = false;
  const finish = () => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    done();
  };
  const headers = { ...to.headers, connection: 'upgrade', upgrade: req.headers.upgrade };
  // An upgraded connection leaves any pool: a connection of its own.
  const upstream = request({ host: to.ip, port: to.port, method: req.method, path: req.url, headers, agent: false });
  const timer = setTimeout(() => {
    upstream.destroy();
    answerOnSocket(socket, 504, 'request timeout\n');
  }, to.timeoutMs);
  timer.unref();
  socket.on('error', () => socket.destroy());
  socket.once('close', () => {
    upstream.destroy();
    finish();
  });
  upstream.on('upgrade', (up, pod, podHead) => {
    clearTimeout(timer);
    if (socket.destroyed) return void pod.destroy();
    socket.write(responseHead(up.statusCode ?? 101, up.statusMessage || 'Switching Protocols', up.rawHeaders));
    if (podHead.length > 0) socket.write(podHead);
    if (head.length > 0) pod.write(head);
    pod.on('error', () => socket.destroy());
    pod.once('close', () => socket.destroy());
    socket.once('close', () => pod.destroy());
    pod.pipe(socket);
    socket.pipe(pod);
  });
  // The pod answered without upgrading: its answer goes to the client, then the connection closes.
  upstream.on('response', (up) => {
    clearTimeout(timer);
    const kept: string[] = [];
    const dropped = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'content-length']);
    for (let i = 0; i + 1 < up.rawHeaders.length; i += 2) if (!dropped.has(up.rawHeaders[i]!.toLowerCase())) kept.push(up.rawHeaders[i]!, up.rawHeaders[i + 1]!);
    socket.write(responseHead(up.statusCode ?? 502, up.statusMessage || (STATUS_CODES[up.statusCode ?? 502] ?? ''), [...kept, 'connection', 'close']));
    up.on('error', () => socket.destroy());
    up.pipe(socket);
  });
  upstream.on('error', () => {
    clearTimeout(timer);
    answerOnSocket(socket, 502, 'the revision could not be reached\n');
  });
  upstream.end();
}
