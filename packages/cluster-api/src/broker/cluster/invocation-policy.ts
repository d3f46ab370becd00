/**
 * The delivery policy of a function's asynchronous invocations: a DeliverySpec (Knative's
 * `eventingduckv1.DeliverySpec`, as in a Trigger's `spec.delivery`) held as JSON in the Knative
 * Service's annotation `function.knative.dev/async-delivery`, e.g.
 * `{"retry": 2, "backoffPolicy": "linear", "backoffDelay": "PT0.5S", "deadLetterSink": {"ref": {"apiVersion": "v1", "kind": "Service", "name": "dlq"}}}`.
 * No annotation (or no such Service): the default (Knative's broker default).
 *
 * `AsyncDeliveryPolicies` reads it at every attempt from a watch of the Knative Services (no request
 * to the API per invocation); until the first list arrives (or where serving.knative.dev is not
 * served) it asks the API for the one Service.
 */
import { Informer, KubeApiError, type KubeClient, type KubeObject } from '@func/kube-client';
import type { Logger } from '../metrics.js';
import type { DeliverySpec } from '../types.js';
import { referencedResource } from './resources.js';

export const ASYNC_DELIVERY_ANNOTATION = 'function.knative.dev/async-delivery';

const knativeServices = referencedResource('serving.knative.dev/v1', 'Service');

/** The annotation's DeliverySpec; throws why it cannot be read (left to the caller: the default applies). */
export function parseAsyncDelivery(value: string | undefined): DeliverySpec | undefined {
  if (value === undefined) return undefined;
  let spec: unknown;
  try {
    spec = JSON.parse(value);
  } catch {
    throw new Error(`annotation ${ASYNC_DELIVERY_ANNOTATION} is not JSON`);
  }
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw new Error(`annotation ${ASYNC_DELIVERY_ANNOTATION} is not a DeliverySpec object`);
  return spec as DeliverySpec;
}

export function asyncDeliveryPolicy(client: KubeClient): (namespace: string, name: string) => Promise<DeliverySpec | undefined> {
  return async (namespace, name) => {
    let ksvc: KubeObject;
    try {
      ksvc = await client.get(knativeServices, name, { namespace });
    } catch (err) {
      if (err instanceof KubeApiError && err.code === 404) return undefined;
      throw new Error(err instanceof KubeApiError ? `failed to get Service "${namespace}/${name}": ${err.status.message ?? err.reason}` : 'the cluster API could not be reached');
    }
    return parseAsyncDelivery(ksvc.metadata?.annotations?.[ASYNC_DELIVERY_ANNOTATION]);
  };
}

export interface AsyncDeliveryPoliciesOptions {
  readonly logger: Logger;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export class AsyncDeliveryPolicies {
  private readonly services: Informer<KubeObject>;
  private readonly fetch: (namespace: string, name: string) => Promise<DeliverySpec | undefined>;
  private synced = false;

  constructor(client: KubeClient, options: AsyncDeliveryPoliciesOptions) {
    this.fetch = asyncDeliveryPolicy(client);
    this.services = new Informer<KubeObject>(client, knativeServices, {
      namespace: '', minBackoffMs: options.minBackoffMs ?? 200, maxBackoffMs: options.maxBackoffMs ?? 5_000,
      onError: (err) => options.logger('debug', 'broker watch failed, retrying', { what: 'watch services.serving.knative.dev', error: (err as Error).message }),
    });
  }

  start(): this {
    this.services.start();
    void this.services.synced.then(() => (this.synced = true));
    return this;
  }

  /** The function's DeliverySpec as its Knative Service says now; throws why it cannot be read. */
  readonly policyOf = async (namespace: string, name: string): Promise<DeliverySpec | undefined> => {
    if (!this.synced) return this.fetch(namespace, name);
    return parseAsyncDelivery(this.services.get(name, namespace)?.metadata?.annotations?.[ASYNC_DELIVERY_ANNOTATION]);
  };

  stop(): Promise<void> {
    return this.services.stop();
  }
}
