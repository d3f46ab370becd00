/**
 * The CustomResourceDefinitions `serve` installs at start for the kinds its parts act on: Knative
 * Serving's Service, Configuration, Revision, Route (serving.knative.dev/v1) and DomainMapping
 * (v1beta1), and Knative Eventing's Broker and Trigger (eventing.knative.dev/v1), Channel,
 * InMemoryChannel and Subscription (messaging.knative.dev/v1), Sequence and Parallel
 * (flows.knative.dev/v1) and the sources (sources.knative.dev/v1: PingSource, ApiServerSource,
 * SinkBinding, ContainerSource) when the broker runs.
 * Names, short names, categories, scope and printer columns are Knative's; spec and status are
 * open objects (`x-kubernetes-preserve-unknown-fields`) whose rules the admission plugin and the
 * controllers hold, so Knative's own CRDs applied over these (stricter schemas, the same names)
 * keep every stored object valid. A CRD already there is left as it is: an operator's (or
 * Knative's) wins. Each is recorded as applied (`kubectl.kubernetes.io/last-applied-configuration`),
 * as `kubectl apply` would have left it, so applying Knative's over it is an ordinary three-way
 * merge: what only the server's had (its extra short name, its open schema) goes.
 */
import type { KubeObject } from '../api/meta.js';
import { isApiError } from '../api/errors.js';
import type { Registry } from '../registry/rest.js';

interface Column { name: string; type: string; jsonPath: string }

const ready = (field: 'status' | 'reason'): Column => ({ name: field === 'status' ? 'Ready' : 'Reason', type: 'string', jsonPath: `.status.conditions[?(@.type=='Ready')].${field}` });
const age: Column = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };
const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const schema = {
  openAPIV3Schema: {
    type: 'object',
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec: open, status: open },
  },
};

interface Kind { group: string; version: string; kind: string; plural: string; shortNames?: string[]; categories: string[]; columns: Column[] }

const LastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

/** `crd` with the annotation `kubectl apply` would have left on it. */
const asApplied = (crd: KubeObject): KubeObject => ({ ...crd, metadata: { ...crd.metadata, annotations: { [LastApplied]: `${JSON.stringify(crd)}\n` } } });

const definition = (k: Kind): KubeObject => asApplied({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${k.plural}.${k.group}`, labels: { 'app.kubernetes.io/managed-by': 'cluster-api' } },
  spec: {
    group: k.group,
    names: { kind: k.kind, listKind: `${k.kind}List`, plural: k.plural, singular: k.kind.toLowerCase(), ...(k.shortNames && { shortNames: k.shortNames }), categories: k.categories },
    scope: 'Namespaced',
    versions: [{ name: k.version, served: true, storage: true, subresources: { status: {} }, additionalPrinterColumns: k.columns, schema }],
  },
});

const serving = ['all', 'knative', 'serving'];
const eventing = ['all', 'knative', 'eventing'];
const S = 'serving.knative.dev';
const M = 'messaging.knative.dev';

export const BuiltinCrds: readonly KubeObject[] = [
  definition({
    group: S, version: 'v1', kind: 'Service', plural: 'services', shortNames: ['kservice', 'ksvc'], categories: serving,
    columns: [
      { name: 'URL', type: 'string', jsonPath: '.status.url' },
      { name: 'LatestCreated', type: 'string', jsonPath: '.status.latestCreatedRevisionName' },
      { name: 'LatestReady', type: 'string', jsonPath: '.status.latestReadyRevisionName' },
      ready('status'), ready('reason'),
    ],
  }),
  definition({
    group: S, version: 'v1', kind: 'Configuration', plural: 'configurations', shortNames: ['config', 'cfg', 'kcfg'], categories: serving,
    columns: [
      { name: 'LatestCreated', type: 'string', jsonPath: '.status.latestCreatedRevisionName' },
      { name: 'LatestReady', type: 'string', jsonPath: '.status.latestReadyRevisionName' },
      ready('status'), ready('reason'),
    ],
  }),
  definition({
    group: S, version: 'v1', kind: 'Revision', plural: 'revisions', shortNames: ['rev'], categories: serving,
    columns: [
      { name: 'Config Name', type: 'string', jsonPath: ".metadata.labels['serving\\.knative\\.dev/configuration']" },
      { name: 'Generation', type: 'string', jsonPath: ".metadata.labels['serving\\.knative\\.dev/configurationGeneration']" },
      ready('status'), ready('reason'),
      { name: 'Actual Replicas', type: 'integer', jsonPath: '.status.actualReplicas' },
      { name: 'Desired Replicas', type: 'integer', jsonPath: '.status.desiredReplicas' },
    ],
  }),
  definition({
    group: S, version: 'v1', kind: 'Route', plural: 'routes', shortNames: ['rt'], categories: serving,
    columns: [{ name: 'URL', type: 'string', jsonPath: '.status.url' }, ready('status'), ready('reason')],
  }),
  definition({
    group: S, version: 'v1beta1', kind: 'DomainMapping', plural: 'domainmappings', shortNames: ['dm'], categories: serving,
    columns: [{ name: 'URL', type: 'string', jsonPath: '.status.url' }, ready('status'), ready('reason')],
  }),
  definition({
    group: 'eventing.knative.dev', version: 'v1', kind: 'Broker', plural: 'brokers', categories: eventing,
    columns: [
      { name: 'URL', type: 'string', jsonPath: '.status.address.url' }, age, ready('status'), ready('reason'),
      { name: 'Class', type: 'string', jsonPath: ".metadata.annotations.eventing\\.knative\\.dev/broker\\.class" },
    ],
  }),
  definition({
    group: 'eventing.knative.dev', version: 'v1', kind: 'Trigger', plural: 'triggers', categories: eventing,
    columns: [
      { name: 'Broker', type: 'string', jsonPath: '.spec.broker' },
      { name: 'Subscriber_URI', type: 'string', jsonPath: '.status.subscriberUri' },
      age, ready('status'), ready('reason'),
    ],
  }),
  ...(['PingSource', 'ApiServerSource', 'SinkBinding', 'ContainerSource'] as const).map((kind) => definition({
    group: 'sources.knative.dev', version: 'v1', kind, plural: `${kind.toLowerCase()}s`,
    categories: kind === 'SinkBinding' ? ['all', 'knative', 'sources', 'bindings'] : ['all', 'knative', 'sources'],
    columns: [
      { name: 'Sink', type: 'string', jsonPath: '.status.sinkUri' },
      ...(kind === 'PingSource' ? [{ name: 'Schedule', type: 'string', jsonPath: '.spec.schedule' }] : []),
      age, ready('status'), ready('reason'),
    ],
  })),
  ...([
    { group: M, kind: 'Channel', plural: 'channels', shortNames: ['ch'], categories: [...eventing, 'messaging', 'channel'] },
    { group: M, kind: 'InMemoryChannel', plural: 'inmemorychannels', shortNames: ['imc'], categories: ['all', 'knative', 'messaging', 'channel'] },
    { group: 'flows.knative.dev', kind: 'Sequence', plural: 'sequences', categories: ['all', 'knative', 'flows'] },
    { group: 'flows.knative.dev', kind: 'Parallel', plural: 'parallels', categories: ['all', 'knative', 'flows'] },
  ]).map((k) => definition({ ...k, version: 'v1', columns: [{ name: 'URL', type: 'string', jsonPath: '.status.address.url' }, age, ready('status'), ready('reason')] })),
  definition({ group: M, version: 'v1', kind: 'Subscription', plural: 'subscriptions', shortNames: ['sub'], categories: ['all', 'knative', 'messaging'], columns: [age, ready('status'), ready('reason')] }),
];

/** The groups of Knative Eventing's kinds, installed only where the broker runs. */
const EventingGroups = /\.(eventing|messaging|flows|sources)\.knative\.dev$/;

/** Creates each of `objects` in the registry's `plural` of `group/v1` that is not there yet; one there is left as it is. */
export async function ensureCreated(registry: Pick<Registry, 'find'>, group: string, plural: string, objects: readonly KubeObject[]): Promise<void> {
  const store = registry.find(group, 'v1', plural);
  if (!store) return;
  for (const o of objects)
    await store.create({}, structuredClone(o)).catch((err: unknown) => {
      if (!(isApiError(err) && err.code === 409)) throw err;
    });
}

/**
 * Creates each of BuiltinCrds that is not there yet (the CRD controller then serves it): Knative
 * Serving's always (the controller manager acts on them), Knative Eventing's (Broker, Trigger,
 * Channel, InMemoryChannel, Subscription, Sequence, Parallel, the sources) with `eventing` (the
 * broker runs in this process).
 */
export const installBuiltinCrds = (registry: Pick<Registry, 'find'>, o: { eventing: boolean }): Promise<void> =>
  ensureCreated(registry, 'apiextensions.k8s.io', 'customresourcedefinitions', BuiltinCrds.filter((c) => o.eventing || !EventingGroups.test(c.metadata.name!)));
