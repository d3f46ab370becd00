/**
 * The broker inside `cluster-api serve`: the same client of the API as `cluster-api broker`, over a
 * connection to the server it runs beside. Its credentials are the admin's until the API authorizes
 * requests; then it gets an identity of its own bound to `brokerClusterRole` (role.ts).
 */
import { KubeClient } from '@func/kube-client';
import type { Logger } from '../metrics.js';
import { parseAdvertised } from './advertise.js';
import { type ClusterBroker, startClusterBroker } from './start.js';

export interface EmbeddedBrokerOptions {
  /** The API server's URL and the PEM its certificate verifies with (absent: plain HTTP). */
  readonly apiUrl: string;
  readonly ca?: string;
  readonly token: string;
  readonly store: string;
  readonly port: number;
  readonly host: string;
  readonly advertiseAddress?: string;
  readonly log?: (entry: Record<string, unknown>) => void;
  /** The serving gateway's URL, once it listens: asynchronous invocations go through it. */
  readonly gatewayUrl?: () => string | undefined;
}

export class BrokerStartError extends Error {
  override readonly name = 'BrokerStartError';
}

export async function startEmbeddedBroker(o: EmbeddedBrokerOptions): Promise<ClusterBroker> {
  const client = new KubeClient({
    server: o.apiUrl,
    ca: o.ca === undefined ? undefined : Buffer.from(o.ca),
    insecureSkipTlsVerify: false,
    credentials: { token: o.token },
    namespace: 'default',
    context: 'embedded-broker',
    files: [],
  });
  const logger: Logger | undefined = o.log && ((level, msg, fields) => o.log!({ level, msg, ...fields }));
  try {
    return await startClusterBroker({
      client,
      store: o.store,
      port: o.port,
      host: o.host,
      advertise: o.advertiseAddress === undefined ? undefined : parseAdvertised(o.advertiseAddress),
      ...(logger ? { logger } : {}),
      ...(o.gatewayUrl ? { gatewayUrl: o.gatewayUrl } : {}),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // The operator's next step, not the socket's words.
    if (code === 'EADDRINUSE') throw new BrokerStartError(`the broker's port ${o.port} on ${o.host} is in use: pick another with --broker-port, or run without the broker (--no-broker)`);
    throw new BrokerStartError(`the broker did not start: ${(err as Error).message}`);
  }
}
