/**
 * Requests that ask to switch protocols (`Connection: Upgrade`) leave Node's HTTP parser as the
 * server's 'upgrade' event. They go through the same pipeline as every other request (app.ts:
 * authentication, path, route, authorization, the connect subresource): with a ServerResponse bound
 * to their connection, so an answer or a refusal is ordinary HTTP (after which the connection
 * closes), and with an `Upgrade` a connect handler may take (port-forward, a proxied WebSocket).
 */
import type { IncomingMessage } from 'node:http';
import { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { badRequest } from '../api/errors.js';
import type { Upgrade } from '../registry/subresource.js';
import type { RequestHandler } from './app.js';
import { sendError } from './respond.js';

/**
 * The 'upgrade' listener. `taken` holds the connections handlers took over while they are open, so
 * shutdown can end them (they outlive any HTTP exchange, as watches do).
 */
export function upgradeListener(handler: RequestHandler, taken: Set<Duplex>): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    // Node drops its own listeners from an upgraded socket: an error must not go unhandled.
    socket.on('error', () => socket.destroy());
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket as Socket);
    let took = false;
    res.once('finish', () => {
      if (took) return;
      res.detachSocket(socket as Socket);
      socket.end();
    });
    const upgrade: Upgrade = {
      take() {
        if (took) throw new Error('the connection was taken already');
        took = true;
        res.detachSocket(socket as Socket);
        taken.add(socket);
        socket.once('close', () => taken.delete(socket));
        return { socket, head };
      },
    };
    // Node hands an upgrade request over without reading its body: one that has a body cannot be served.
    if (hasBody(req)) return sendError(res, badRequest('a request that asks to switch protocols cannot have a body'));
    handler(req, res, upgrade);
  };
}

const hasBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
