/**
 * What the broker reads and writes in the cluster API, as resource types: Knative's Broker,
 * Trigger, Channel, InMemoryChannel and Subscription (custom resources: served only while their CRDs are), the CRDs themselves, and what
 * subscribers resolve through (Services, Endpoints, any Addressable).
 */
import { Resources, resourceType, type ResourceType } from '@func/kube-client';

export const BROKER_CRD = 'brokers.eventing.knative.dev';
export const TRIGGER_CRD = 'triggers.eventing.knative.dev';
export const SUBSCRIPTION_CRD = 'subscriptions.messaging.knative.dev';

export const BrokerResources = {
  brokers: resourceType('eventing.knative.dev/v1', 'Broker', 'brokers'),
  triggers: resourceType('eventing.knative.dev/v1', 'Trigger', 'triggers'),
  channels: resourceType('messaging.knative.dev/v1', 'Channel', 'channels'),
  inmemorychannels: resourceType('messaging.knative.dev/v1', 'InMemoryChannel', 'inmemorychannels'),
  subscriptions: resourceType('messaging.knative.dev/v1', 'Subscription', 'subscriptions'),
  crds: resourceType('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false),
  services: Resources.services,
  endpoints: Resources.endpoints,
} as const;

/**
 * The resource of a referenced kind, named as Knative's resolver names it (`apis.KindToResource`:
 * lower case, then `es` after a final `s`, else `s`), so a reference that resolves on Knative
 * resolves here and one that does not, does not.
 */
export function referencedResource(apiVersion: string, kind: string): ResourceType {
  const lower = kind.toLowerCase();
  return resourceType(apiVersion, kind, lower.endsWith('s') ? `${lower}es` : `${lower}s`);
}
