/** A TCP proxy on 127.0.0.1 that a test can cut (drop every connection) and hold (refuse new ones). */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface Proxy {
  port: number;
  /** Drops every open connection; with `hold`, refuses new ones until release(). */
  cut(hold?: boolean): void;
  release(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<Proxy> {
  const sockets = new Set<Socket>();
  let holding = false;
  const server: Server = createServer((client) => {
    if (holding) return client.destroy();
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    cut(hold = false) {
      holding = hold;
      for (const s of sockets) s.destroy();
    },
    release() {
      holding = false;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
