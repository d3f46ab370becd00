import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { start } from '../../src/index.js';
import type { FunctionModule, Handler, Options } from '../../src/types.js';

export interface Served {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Starts a function on 127.0.0.1 and a free port. */
export async function serve(fn: Handler | FunctionModule, options: Partial<Options> = {}): Promise<Served> {
  const server = await start(fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', ...options });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
