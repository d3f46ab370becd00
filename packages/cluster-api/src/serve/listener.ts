/**
 * Starting a part that listens on a port of its own (the gateway, the registry): a failed start
 * releases what it opened, and a socket error becomes the operator's words (the port in use: which
 * flag picks another) with the socket's code kept, so the supervisor takes it as permanent.
 */
export class ListenerStartError extends Error {
  override readonly name = 'ListenerStartError';
  constructor(message: string, readonly code?: string) {
    super(message);
  }
}

export interface Listener {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startListener<T extends Listener>(listener: T, o: { what: string; host: string; port: number; portFlag: string }): Promise<T> {
  try {
    await listener.start();
  } catch (err) {
    await listener.stop().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new ListenerStartError(`${o.what}'s port ${o.port} on ${o.host} is in use: pick another with ${o.portFlag}`, code);
    if (code === 'EACCES' || code === 'EADDRNOTAVAIL') throw new ListenerStartError(`${o.what} cannot listen on ${o.host}:${o.port} (${code})`, code);
    throw err;
  }
  return listener;
}
