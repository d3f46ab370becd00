/**
 * The server side of a WebSocket (RFC 6455, by the maintained `ws` package) on a connection already
 * taken over from the HTTP server, and a Duplex over its binary messages: KEP-4006 tunnels SPDY
 * frames through them (`SPDY/3.1+portforward.k8s.io`), message boundaries meaning nothing, as
 * client-go's TunnelingConnection reads them. A text message ends the connection, as it does there.
 * Backpressure both ways: a full reader pauses the socket, a write completes when `ws` flushed it.
 */
import type { IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { badRequest } from '../api/errors.js';

/** What `ws` would refuse with a bare 400, checked first so the client gets a Status saying why (gorilla's wording). */
export function checkWebSocketHandshake(req: IncomingMessage): void {
  if (req.method !== 'GET') throw badRequest('websocket: the client is not using the websocket protocol: request method is not GET');
  if (req.headers['sec-websocket-version'] !== '13')
    throw badRequest("websocket: unsupported version: 13 not found in 'Sec-Websocket-Version' header");
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !/^[+/0-9A-Za-z]{22}==$/.test(key))
    throw badRequest("websocket: not a websocket handshake: 'Sec-WebSocket-Key' header must be Base64 encoded value of 16-byte length");
}

export interface WebSocketOptions {
  /** The subprotocol the server chose (the client listed it); '' when the client offered none. */
  protocol: string;
  /** Largest message accepted; client-go writes one message per SPDY write (a frame header, ≤ 32 KiB of data). */
  maxPayload: number;
}

/** Completes the handshake (101 naming the chosen subprotocol, if any) on `socket`, taken over with the request's `head` bytes. */
export function acceptWebSocket(req: IncomingMessage, socket: Duplex, head: Buffer, options: WebSocketOptions): Promise<WebSocket> {
  const server = new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: options.maxPayload });
  // `ws` parses subprotocols as RFC 7230 tokens, which `SPDY/3.1+…` is not ('/'), and would refuse the
  // handshake: the protocol was negotiated already (upgrade.ts), so `ws` is not shown the offer and the
  // answer names the choice.
  delete req.headers['sec-websocket-protocol'];
  if (options.protocol) server.on('headers', (headers: string[]) => headers.push(`Sec-WebSocket-Protocol: ${options.protocol}`));
  return new Promise((resolve, reject) => {
    const gone = () => reject(new Error('connection closed during the WebSocket handshake'));
    socket.once('close', gone);
    server.handleUpgrade(req, socket, head, (ws) => {
      socket.off('close', gone);
      resolve(ws);
    });
  });
}

/** The byte stream of a WebSocket's binary messages (what KEP-4006 tunnels SPDY in). */
export const webSocketStream = (ws: WebSocket): Duplex => new WebSocketDuplex(ws);

class WebSocketDuplex extends Duplex {
  constructor(private readonly ws: WebSocket) {
    super({ allowHalfOpen: false });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) return void ws.close(1003, 'binary messages only');
      if (!this.push(data)) ws.pause();
    });
    ws.on('close', () => {
      this.push(null);
      this.destroy();
    });
    ws.on('error', () => this.destroy());
  }

  override _read(): void {
    if (this.ws.isPaused) this.ws.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.ws.readyState !== WebSocket.OPEN) return done();
    this.ws.send(chunk, { binary: true }, () => done());
  }

  override _final(done: (err?: Error | null) => void): void {
    // A normal closure is what client-go's TunnelingConnection reads as EOF.
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate();
    done(err);
  }
}

/**
 * The kubelet's channel WebSockets (port-forward, exec, attach): each message starts with its
 * channel, a byte (`v4.channel.k8s.io`, `v5.channel.k8s.io`) or an ASCII digit before base64 text
 * (`v4.base64.channel.k8s.io`). Sends `data` on `channel`; `done` once `ws` flushed it (or at once when closed).
 */
export function sendChannel(ws: WebSocket, base64: boolean, channel: number, data: Buffer, done?: () => void): void {
  if (ws.readyState !== WebSocket.OPEN) return done?.();
  if (base64) ws.send(String.fromCharCode(48 + channel) + data.toString('base64'), () => done?.());
  else ws.send(Buffer.concat([Buffer.from([channel]), data]), { binary: true }, () => done?.());
}

/**
 * A client's channel message as bytes (channel first); undefined for a base64 message without a
 * channel digit. Text frames count as bytes in the binary protocols, as the kubelet's wsstream reads
 * them (the Python client sends its stdin as text frames).
 */
export function channelMessage(data: Buffer, base64: boolean): Buffer | undefined {
  if (!base64) return data;
  const text = data.toString('latin1');
  const channel = text.charCodeAt(0) - 48;
  if (!(channel >= 0 && channel <= 9)) return undefined;
  return Buffer.concat([Buffer.from([channel]), Buffer.from(text.slice(1), 'base64')]);
}
