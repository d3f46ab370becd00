/**
 * The broker as a client of the cluster API: its event log and ingress (`startBroker`), fed by the
 * API-backed TriggerSource and SubscriberResolver over one KubeClient. What `cluster-api broker`
 * runs alone and `cluster-api serve` runs beside the API server.
 */
import { EventBroadcaster, kubeEventSink, type KubeClient } from '@func/kube-client';
import { type BrokerOptions, type RunningBroker, startBroker } from '../broker.js';
import type { FailureRecorder } from '../dispatch/worker.js';
import { jsonLogger, type Logger } from '../metrics.js';
import { type Advertised, ingressBase } from './advertise.js';
import { AsyncDeliveryPolicies } from './invocation-policy.js';
import { DelegatedAuth } from '../../auth/delegated.js';
import { ClusterResolver } from './resolver.js';
import { ApiTriggerSource } from './trigger-source.js';
import { gatewayRouter } from '../dispatch/cluster-hosts.js';

/** The `source.component` of the Events the broker records, and the reason of a failed delivery's. */
export const DELIVERY_EVENT_SOURCE = 'broker';
export const DELIVERY_FAILED_REASON = 'DeliveryFailed';

export interface ClusterBrokerOptions extends Omit<BrokerOptions, 'triggerSource' | 'resolver' | 'ingressBaseUrl' | 'logger'> {
  /** The broker's own connection and credentials; closed by `stop()`. */
  readonly client: KubeClient;
  /** What Brokers' `status.address.url` names; default the bind host (0.0.0.0: 127.0.0.1) and the port bound. */
  readonly advertise?: Advertised;
  readonly logger?: Logger;
  /** Backoff of the informers after a failed list or watch (default 200 ms doubling to 5 s). */
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /**
   * The serving gateway's URL: given, the broker serves asynchronous invocations of functions
   * (`/invocations/…`), run through it with each Knative Service's `function.knative.dev/async-delivery` policy.
   */
  readonly gatewayUrl?: () => string | undefined;
}

export interface ClusterBroker {
  readonly broker: RunningBroker;
  readonly source: ApiTriggerSource;
  readonly resolver: ClusterResolver;
  /** Stops the ingress and deliveries, then the informers, then closes the client. */
  stop(): Promise<void>;
}

export async function startClusterBroker(opts: ClusterBrokerOptions): Promise<ClusterBroker> {
  const { client, advertise, minBackoffMs, maxBackoffMs, gatewayUrl, ...rest } = opts;
  const logger = opts.logger ?? jsonLogger;
  const backoff = { minBackoffMs, maxBackoffMs };
  const source = new ApiTriggerSource(client, { logger, ...backoff }).start();
  const resolver = new ClusterResolver(client, { logger, ...backoff }).start();
  const policies = gatewayUrl ? new AsyncDeliveryPolicies(client, { logger, ...backoff }).start() : undefined;
  // A Trigger whose deliveries fail gets a Warning Event saying the last error (Knative keeps it Ready).
  const events = new EventBroadcaster(kubeEventSink(client), (entry) => logger('warn', 'event not recorded', entry));
  const recorder = events.recorder({ component: DELIVERY_EVENT_SOURCE });
  const recordFailure: FailureRecorder = (about, message) => recorder.event(about, 'Warning', DELIVERY_FAILED_REASON, message);
  let broker: RunningBroker;
  try {
    broker = await startBroker({
      ...rest, logger, triggerSource: source, resolver, recordFailure, ingressBaseUrl: ingressBase(advertise, opts.host ?? '127.0.0.1'),
      debugAuth: new DelegatedAuth(client),
      // Cluster-local subscribers (a Knative Service's address) through the gateway, and asynchronous invocations.
      ...(gatewayUrl ? { router: gatewayRouter(gatewayUrl), invocations: { gatewayUrl, policyOf: policies!.policyOf } } : {}),
    });
  } catch (err) {
    await events.close();
    await Promise.all([source.stop(), resolver.stop(), policies?.stop()]);
    client.close();
    throw err;
  }
  return {
    broker,
    source,
    resolver,
    stop: async () => {
      await broker.stop();
      await events.close();
      await Promise.all([source.stop(), resolver.stop(), policies?.stop()]);
      client.close();
    },
  };
}
