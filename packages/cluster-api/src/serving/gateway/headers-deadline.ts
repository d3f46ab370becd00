/**
 * A deadline for request heads on connections an HTTP/1.1 server is handed (its 'connection'
 * event) rather than accepts itself: Node.js's `headersTimeout` is enforced only on connections its
 * server's own listener accepted, and the gateway's listener tells HTTP/1.1 from HTTP/2 first
 * (h2c.ts). A connection gets `ms` to deliver a request head when it is handed over and again each
 * time it has no request in flight (after the last response ended), so headers that trickle in a
 * byte at a time (slowloris) are cut off; a request whose head arrived is never cut by this.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export function enforceHeadersDeadline(server: Server, ms: number): void {
  const state = new WeakMap<Socket, { timer?: NodeJS.Timeout; inFlight: number }>();
  const arm = (socket: Socket) => {
    const s = state.get(socket);
    if (!s || socket.destroyed) return;
    clearTimeout(s.timer);
    s.timer = setTimeout(() => socket.destroy(), ms);
    s.timer.unref();
  };
  const disarm = (socket: Socket) => clearTimeout(state.get(socket)?.timer);
  server.on('connection', (socket: Socket) => {
    state.set(socket, { inFlight: 0 });
    socket.once('close', () => disarm(socket));
    arm(socket);
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const s = state.get(socket);
    if (!s) return;
    s.inFlight++;
    disarm(socket);
    res.once('close', () => {
      s.inFlight--;
      if (s.inFlight === 0) arm(socket);
    });
  });
  // An upgraded connection (a websocket) is the pod's from then on.
  server.on('upgrade', (req: IncomingMessage) => {
    disarm(req.socket);
    state.delete(req.socket);
  });
}
