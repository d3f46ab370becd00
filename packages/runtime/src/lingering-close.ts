/**
 * A 413 the client can read. node:http destroys the socket as soon as a `connection: close`
 * response is written; upload bytes it has not read then make the kernel answer with RST, and a
 * client still sending (Python's http.client and requests, any client that writes the whole body
 * before reading) loses the response to ECONNRESET or EPIPE. Like nginx's lingering close: write
 * the response, half-close, keep reading and discarding what the client still sends, and close
 * when it stops or after a bound.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** How long a rejected upload may go on being read and discarded after the response. */
export const LINGER_MS = 5000;

export function closeAfterResponse(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('connection', 'close');
  req.resume(); // no listener: what is still coming is read and dropped
  const socket = req.socket as Socket | undefined;
  if (!socket) return;
  // node:http calls destroySoon() once the `connection: close` response is flushed.
  socket.destroySoon = function lingeringClose(this: Socket): void {
    this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
  };
}
