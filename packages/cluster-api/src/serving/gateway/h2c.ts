/**
 * HTTP/2 in clear text (h2c) at the gateway, as Knative's gateway takes it: a client with prior
 * knowledge (gRPC's) opens its connection with HTTP/2's preface on the same listener HTTP/1.1
 * comes to; `sniff` reads a new connection's first bytes, puts them back and hands the connection
 * to the HTTP/2 server or the HTTP/1.1 one (each takes a connection given through its
 * 'connection' event). Towards the pod a request goes over HTTP/1.1, or over h2c when the
 * revision's container port is named `h2c` (Knative's rule): `H2cPods` keeps one HTTP/2 session per
 * such pod and makes each request a stream on it, shaped as an HTTP/1.1 client request is (a
 * writable body; `H2cResponse` emitted with itself as the response: `statusCode`, `headers`, a
 * readable body; then 'trailers').
 */
import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders as H2Headers } from 'node:http2';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

/** The connection preface every HTTP/2 client sends first (RFC 9113 §3.4). */
const Preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

/** How long a new connection may take to send enough to tell its protocol (Node.js's headersTimeout default). */
export const SniffTimeoutMs = 60_000;

/**
 * Hands `socket` to `h2` when it opens with the HTTP/2 preface, else to `h1`, once enough of it
 * came to tell (the bytes read are put back first; `h2` gets it paused, as an HTTP/2 server reads
 * what is buffered itself, `h1` flowing). A connection that closes before is dropped;
 * one that sends too little within `timeoutMs` is closed.
 */
export function sniff(socket: Socket, h1: (s: Socket) => void, h2: (s: Socket) => void, timeoutMs = SniffTimeoutMs): void {
  let seen: Buffer = Buffer.alloc(0);
  const tooSlow = () => socket.destroy();
  socket.setTimeout(timeoutMs);
  socket.once('timeout', tooSlow);
  const onData = (chunk: Buffer) => {
    seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const n = Math.min(seen.length, Preface.length);
    const http2 = seen.subarray(0, n).equals(Preface.subarray(0, n));
    if (http2 && seen.length < Preface.length) return;
    socket.off('data', onData);
    socket.setTimeout(0);
    socket.off('timeout', tooSlow);
    socket.pause();
    socket.unshift(seen);
    if (http2) return h2(socket);
    h1(socket);
    socket.resume();
  };
  socket.on('data', onData);
}

/** The event a stream from `H2cPods.request` emits with its response, as an HTTP/1.1 client request emits 'response'. */
export const H2cResponse = 'h2c-response';

/** The response of a stream, as an HTTP/1.1 client's response reads. */
type Response = ClientHttp2Stream & { statusCode: number; statusMessage: string; headers: IncomingHttpHeaders };

/** Requests to pods that speak h2c, one session per pod. */
export class H2cPods {
  private readonly sessions = new Map<string, ClientHttp2Session>();

  private session(ip: string, port: number): ClientHttp2Session {
    const id = `${ip}:${port}`;
    let s = this.sessions.get(id);
    if (s && !s.closed && !s.destroyed) return s;
    s = connect(`http://${ip.includes(':') ? `[${ip}]` : ip}:${port}`);
    const created = s;
    const forget = () => {
      if (this.sessions.get(id) === created) this.sessions.delete(id);
    };
    // A session's error fails its streams (each answers 502); the session is made again on the next request.
    s.on('error', forget).on('close', forget).on('goaway', forget);
    s.unref();
    this.sessions.set(id, s);
    return s;
  }

  /**
   * A request to a pod as a stream: write the body to it; it emits `H2cResponse` (itself, with
   * `statusCode` and `headers`, then its body), 'trailers' (the trailing headers) and 'error'.
   */
  request(o: { ip: string; port: number; method: string; path: string; authority: string; headers: IncomingHttpHeaders }): ClientHttp2Stream {
    const { host: _host, ...headers } = o.headers;
    const stream = this.session(o.ip, o.port).request({
      ...headers,
      [constants.HTTP2_HEADER_METHOD]: o.method,
      [constants.HTTP2_HEADER_PATH]: o.path,
      [constants.HTTP2_HEADER_AUTHORITY]: o.authority,
      [constants.HTTP2_HEADER_SCHEME]: 'http',
    }, { endStream: false });
    stream.on('response', (h: H2Headers) => {
      const up = stream as Response;
      up.statusCode = Number(h[constants.HTTP2_HEADER_STATUS]);
      up.statusMessage = '';
      up.headers = h as IncomingHttpHeaders;
      stream.emit(H2cResponse, up);
    });
    return stream;
  }

  close(): void {
    for (const s of this.sessions.values()) s.destroy();
    this.sessions.clear();
  }
}
