import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A registry on 127.0.0.1 that accepts requests and never answers: an npm install against it is
 * still running when the test interrupts it. `requested` resolves on the first request.
 */
export async function hangingRegistry() {
  let onRequest!: () => void;
  const requested = new Promise<void>((resolve) => (onRequest = resolve));
  const server = createServer(() => onRequest());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    requested,
    openConnections: () => new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
