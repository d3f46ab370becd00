/**
 * Joining a client's stream to a backend connection, and naming why a backend could not be reached.
 * Shared by port-forward (a SPDY stream to a pod port) and the proxies (an upgraded socket to a pod).
 */
import type { Duplex } from 'node:stream';

/**
 * Copies both ways with backpressure (pipe) and passes half-closes on: one side's end of input ends
 * the other's output. A side that closes before both of its directions finished (a reset, an error)
 * takes the other down with it. Resolves once both are closed.
 */
export function splice(client: Duplex, backend: Duplex): Promise<void> {
  return new Promise((resolve) => {
    let open = 2;
    const watch = (side: Duplex, other: Duplex) => {
      // Errors end in 'close', which is all that matters here; without a listener they would throw.
      side.on('error', () => undefined);
      side.once('close', () => {
        if (!(side.readableEnded && side.writableFinished)) other.destroy();
        if (--open === 0) resolve();
      });
    };
    watch(client, backend);
    watch(backend, client);
    client.pipe(backend);
    backend.pipe(client);
  });
}

const reasons: Record<string, string> = {
  ECONNREFUSED: 'connect: connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'connect: no route to host',
  ENETUNREACH: 'connect: network is unreachable',
  ETIMEDOUT: 'i/o timeout',
  ENOTFOUND: 'no such host',
};

/**
 * A dial failure as Go's net package words it, without the address (client-facing text names no
 * address of this machine's network); anything else is a plain "unable to connect".
 */
export function dialFailure(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return (typeof code === 'string' && reasons[code]) || 'unable to connect';
}
