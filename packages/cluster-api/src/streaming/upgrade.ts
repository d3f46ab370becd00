/**
 * Switching an HTTP/1.1 request to a multiplexed stream connection, in the two ways kubectl asks
 * (and, for clients that speak the kubelet's own WebSocket protocols, a WebSocket of channels):
 *
 * - WebSocket with the subprotocol `SPDY/3.1+<protocol>` (KEP-4006, kubectl 1.31+): SPDY frames
 *   tunnelled in binary messages, the protocol chosen by the subprotocol (kube-apiserver's
 *   TunnelingHandler);
 * - `Upgrade: SPDY/3.1` with `X-Stream-Protocol-Version: <protocol>` (the legacy path, and kubectl's
 *   fallback when the WebSocket upgrade fails): raw SPDY on the socket after a 101 (the kubelet's
 *   httpstream.Handshake and spdy.ResponseUpgrader).
 *
 * `negotiate` runs before the connection is taken over, so what cannot be served is answered with a
 * Status; `switchToSpdy` (or `acceptWebSocket`, for channels) then writes the 101.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { badRequest, upgradeRefused } from '../api/errors.js';
import { acceptWebSocket, checkWebSocketHandshake, webSocketStream } from './websocket.js';

/**
 * `websocket`: SPDY tunnelled in a WebSocket; `spdy`: the SPDY upgrade; `channel`: a WebSocket of
 * channel messages (the kubelet's own WebSocket protocols), `protocol` '' when the client named none.
 */
export type Negotiated = { transport: 'websocket' | 'spdy' | 'channel'; protocol: string };

/** KEP-4006's subprotocol prefix; only Kubernetes protocols (`*.k8s.io`) are tunnelled. */
const TunnelPrefix = 'SPDY/3.1+';

const tokens = (value: string | string[] | undefined): string[] =>
  (Array.isArray(value) ? value : value === undefined ? [] : [value]).flatMap((v) => v.split(',')).map((t) => t.trim()).filter(Boolean);

const hasToken = (value: string | string[] | undefined, token: string): boolean => tokens(value).some((t) => t.toLowerCase() === token);

/** `Connection: Upgrade` with an `Upgrade` protocol: kube's httpstream.IsUpgradeRequest. */
export const isUpgradeRequest = (req: IncomingMessage): boolean => hasToken(req.headers.connection, 'upgrade');

export const isWebSocketRequest = (req: IncomingMessage): boolean => isUpgradeRequest(req) && hasToken(req.headers.upgrade, 'websocket');

/** The first protocol the client lists that the server speaks (client order wins, as in httpstream). */
const firstCommon = (client: readonly string[], server: readonly string[]): string | undefined => client.find((p) => server.includes(p));

/**
 * Which transport and protocol an upgrade request gets, or the error that refuses it (nothing written
 * yet). `channels`: the WebSocket subprotocols served as channels when no tunnelled SPDY is offered
 * (kube-apiserver hands such a request to the kubelet, which speaks them).
 */
export function negotiate(req: IncomingMessage, protocols: readonly string[], channels: readonly string[] = []): Negotiated {
  if (!isUpgradeRequest(req)) throw badRequest('Upgrade request required');
  if (isWebSocketRequest(req)) {
    const all = tokens(req.headers['sec-websocket-protocol']);
    const offered = all.filter((p) => p.startsWith(TunnelPrefix) && p.endsWith('.k8s.io')).map((p) => p.slice(TunnelPrefix.length));
    if (offered.length > 0) {
      checkWebSocketHandshake(req);
      return { transport: 'websocket', protocol: choose(offered, protocols) };
    }
    if (channels.length === 0) throw badRequest('unable to upgrade: no tunneling spdy protocols provided');
    checkWebSocketHandshake(req);
    return { transport: 'channel', protocol: all.length === 0 ? '' : choose(all, channels) };
  }
  if (!tokens(req.headers.upgrade).some((t) => t.toLowerCase().includes('spdy/3.1')))
    throw badRequest('unable to upgrade: missing upgrade headers in request');
  const offered = tokens(req.headers['x-stream-protocol-version']);
  if (offered.length === 0) throw badRequest('unable to upgrade: X-Stream-Protocol-Version is required');
  return { transport: 'spdy', protocol: choose(offered, protocols) };
}

function choose(offered: readonly string[], protocols: readonly string[]): string {
  const chosen = firstCommon(offered, protocols);
  if (chosen) return chosen;
  throw upgradeRefused(`unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${protocols.join(' ')}]`);
}

export interface SwitchOptions {
  /** WebSocket: the largest message accepted. */
  maxMessage: number;
}

/** Writes the 101 for SPDY, tunnelled or not, as `negotiate` chose it; answers the byte stream SPDY runs over. */
export async function switchToSpdy(req: IncomingMessage, socket: Duplex, head: Buffer, chosen: Negotiated, options: SwitchOptions): Promise<Duplex> {
  if (chosen.transport === 'websocket')
    return webSocketStream(await acceptWebSocket(req, socket, head, { protocol: TunnelPrefix + chosen.protocol, maxPayload: options.maxMessage }));
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\n' +
      'Connection: Upgrade\r\n' +
      'Upgrade: SPDY/3.1\r\n' +
      `X-Stream-Protocol-Version: ${chosen.protocol}\r\n` +
      `Date: ${new Date().toUTCString()}\r\n\r\n`,
  );
  // Bytes the client sent right behind its request head belong to the SPDY stream.
  if (head.length > 0) socket.unshift(head);
  return socket;
}
