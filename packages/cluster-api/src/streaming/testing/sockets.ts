/** Real TCP on 127.0.0.1 for the streaming tests: a server whose connections a test serves, and stand-in pods. */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';

export interface Listening {
  server: Server;
  port: number;
  /** Connections currently open on the server side. */
  open(): Promise<number>;
  close(): Promise<void>;
}

export async function listen(onConnection: (socket: Socket) => void, options: { allowHalfOpen?: boolean } = {}): Promise<Listening> {
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: options.allowHalfOpen ?? true }, (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    open: () => new Promise((resolve) => server.getConnections((_err, n) => resolve(n))),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export function dial(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    socket.once('connect', () => (socket.off('error', reject), resolve(socket)));
    socket.once('error', reject);
  });
}

/** A stand-in pod port that echoes what it reads, then closes its side when the client closes its own. */
export const echo = (socket: Socket): void => void socket.pipe(socket);

export const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
