/**
 * The kubelet's WebSocket port-forward (pkg/kubelet/cri/streaming/portforward/websocket.go), which
 * client-node's PortForward and the Python client's `portforward` speak: one WebSocket per
 * connection, the ports named in the query, and for port i a data channel 2i and an error channel
 * 2i+1. Each message starts with its channel (a byte; an ASCII digit before base64 text in
 * `v4.base64.channel.k8s.io`); each channel's first message is its port, 16 bits little-endian.
 * Every port is dialled at once; the WebSocket closes once every pod connection has.
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { badRequest } from '../api/errors.js';
import type { PortForwardTarget } from './port-forward.js';
import { dialFailure } from './splice.js';
import { channelMessage, sendChannel } from './websocket.js';

/** Binary first; `''` (no subprotocol at all) is binary too. */
export const ChannelProtocols = ['v4.channel.k8s.io', 'v4.base64.channel.k8s.io'] as const;

/** The kubelet's V4Options: `ports` (each value may list several), all 1–65535, worded as the kubelet words it. */
export function channelPorts(query: URLSearchParams): number[] {
  const values = query.getAll('ports');
  if (values.length === 0) throw badRequest('query parameter "port" is required');
  return values.flatMap((value) => {
    if (value === '') throw badRequest('query parameter "port" cannot be empty');
    return value.split(',').map((p) => {
      if (!/^\d{1,5}$/.test(p) || Number(p) > 65535) throw badRequest(`unable to parse "${value}" as a port`);
      if (Number(p) < 1) throw badRequest(`port "${value}" must be > 0`);
      return Number(p);
    });
  });
}

/** Bytes sent to the client and not yet flushed past which a pod connection stops being read. */
const MaxUnflushed = 256 * 1024;

export function serveChannelPortForward(ws: WebSocket, protocol: string, ports: readonly number[], target: PortForwardTarget): void {
  const base64 = protocol === 'v4.base64.channel.k8s.io';
  const send = (channel: number, data: Buffer, done?: () => void) => sendChannel(ws, base64, channel, data, done);
  const sockets: (Duplex | undefined)[] = [];
  let open = ports.length;
  const finished = () => --open === 0 && ws.close(1000);
  ws.on('close', () => sockets.forEach((s) => s?.destroy()));
  ws.on('error', () => ws.terminate());
  // Until every port is dialled, what the client sends waits in the socket, as it waits in the kubelet's pipes.
  ws.pause();
  const dialled = ports.map(async (port, i) => {
    const portBytes = Buffer.from([port & 0xff, port >> 8]);
    send(2 * i, portBytes);
    send(2 * i + 1, portBytes);
    try {
      sockets[i] = await target.dial(port);
    } catch (err) {
      send(2 * i + 1, Buffer.from(`error forwarding port ${port} to pod ${target.pod}, uid ${target.uid}: ${dialFailure(err)}`));
      return finished();
    }
    toClient(sockets[i]!, (chunk, done) => send(2 * i, chunk, done), finished);
  });
  void Promise.all(dialled).then(() => {
    ws.on('message', (data: Buffer) => fromClient(ws, sockets, channelMessage(data, base64)));
    ws.resume();
  });
}

/** Pod bytes to the client, the pod connection paused while too much waits to be flushed. */
function toClient(socket: Duplex, send: (chunk: Buffer, done: () => void) => void, finished: () => void): void {
  let unflushed = 0;
  socket.on('data', (chunk: Buffer) => {
    unflushed += chunk.length;
    if (unflushed > MaxUnflushed) socket.pause();
    send(chunk, () => {
      unflushed -= chunk.length;
      if (unflushed <= MaxUnflushed && socket.isPaused()) socket.resume();
    });
  });
  // The pod ending its side ends the port, as the kubelet's copy returns at EOF (channels cannot half-close).
  socket.on('end', () => socket.end());
  socket.on('error', () => socket.destroy());
  socket.once('close', finished);
}

/** A client message to its data channel's pod connection; error channels, unknown channels and empty messages are ignored. */
function fromClient(ws: WebSocket, sockets: readonly (Duplex | undefined)[], message: Buffer | undefined): void {
  if (!message || message.length < 2) return;
  const channel = message[0]!;
  const socket = channel % 2 === 0 ? sockets[channel / 2] : undefined;
  if (!socket || socket.destroyed) return;
  if (!socket.write(message.subarray(1))) {
    ws.pause();
    socket.once('drain', () => ws.resume());
  }
}

