/**
 * The delivery policy of a function's asynchronous invocations: a DeliverySpec (Knative's
 * `eventingduckv1.DeliverySpec`, as in a Trigger's `spec.delivery`) held as JSON in the Knative
 * Service's annotation `function.knative.dev/async-delivery`, e.g.
 * `{"retry": 2, "backoffPolicy": "linear", "backoffDelay": "PT0.5S", "deadLetterSink": {"ref": {"apiVersion": "v1", "kind": "Service", "name": "dlq"}}}`.
 * No annotation (or no such Service): the default (Knative's broker default).
 */
import { KubeApiError, type KubeClient, type KubeObject } from '@func/kube-client';
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
