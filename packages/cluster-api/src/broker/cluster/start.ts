/**
 * The broker as a client of the cluster API: its event log and ingress (`startBroker`), fed by the
 * API-backed TriggerSource and SubscriberResolver over one KubeClient. What `cluster-api broker`
 * runs alone and `cluster-api serve` runs beside the API server.
 */
import type { KubeClient } from '@func/kube-client';
import { type BrokerOptions, type RunningBroker, startBroker } from '../broker.js';
import { jsonLogger, type Logger } from '../metrics.js';
import { type Advertised, ingressBase } from './advertise.js';
import { ClusterResolver } from './resolver.js';
import { ApiTriggerSource } from './trigger-source.js';

export interface ClusterBrokerOptions extends Omit<BrokerOptions, 'triggerSource' | 'resolver' | 'ingressBaseUrl' | 'logger'> {
  /** The broker's own connection and credentials; closed by `stop()`. */
  readonly client: KubeClient;
  /** What Brokers' `status.address.url` names; default the bind host (0.0.0.0: 127.0.0.1) and the port bound. */
  readonly advertise?: Advertised;
  readonly logger?: Logger;
  /** Backoff of the informers after a failed list or watch (default 200 ms doubling to 5 s). */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export interface ClusterBroker {
  readonly broker: RunningBroker;
  readonly source: ApiTriggerSource;
  readonly resolver: ClusterResolver;
  /** Stops the ingress and deliveries, then the informers, then closes the client. */
  stop(): Promise<void>;
}

export async function startClusterBroker(opts: ClusterBrokerOptions): Promise<ClusterBroker> {
  const { client, advertise, minBackoffMs, maxBackoffMs, ...rest } = opts;
  const logger = opts.logger ?? jsonLogger;
  const backoff = { minBackoffMs, maxBackoffMs };
  const source = new ApiTriggerSource(client, { logger, ...backoff }).start();
  const resolver = new ClusterResolver(client, { logger, ...backoff }).start();
  let broker: RunningBroker;
  try {
    broker = await startBroker({ ...rest, logger, triggerSource: source, resolver, ingressBaseUrl: ingressBase(advertise, opts.host ?? '127.0.0.1') });
  } catch (err) {
    await Promise.all([source.stop(), resolver.stop()]);
    client.close();
    throw err;
  }
  return {
    broker,
    source,
    resolver,
    stop: async () => {
      await broker.stop();
      await Promise.all([source.stop(), resolver.stop()]);
      client.close();
    },
  };
}
