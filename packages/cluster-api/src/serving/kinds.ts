/**
 * What the serving controllers and the gateway share about Knative Serving's kinds (and the source
 * controllers about Knative Eventing's sources): where they are
 * served, the labels Knative puts on what it makes, and the controllers' view of the kinds, which
 * are custom resources: served only once their CRDs are established, and served again (new stores)
 * when a CRD is replaced (Knative's own applied over the server's).
 */
import type { KubeObject } from '../api/meta.js';
import type { ResourceClient } from '../client/interface.js';
import type { ControllerContext } from '../controllers/context.js';
import type { ObjectCache } from '../controllers/cache.js';
import type { Controller } from '../controllers/shared.js';

export const ServingGroup = 'serving.knative.dev';

export const Kinds = {
  services: { group: ServingGroup, version: 'v1', plural: 'services', kind: 'Service' },
  configurations: { group: ServingGroup, version: 'v1', plural: 'configurations', kind: 'Configuration' },
  revisions: { group: ServingGroup, version: 'v1', plural: 'revisions', kind: 'Revision' },
  routes: { group: ServingGroup, version: 'v1', plural: 'routes', kind: 'Route' },
  domainMappings: { group: ServingGroup, version: 'v1beta1', plural: 'domainmappings', kind: 'DomainMapping' },
  deployments: { group: 'apps', version: 'v1', plural: 'deployments', kind: 'Deployment' },
  k8sServices: { group: '', version: 'v1', plural: 'services', kind: 'Service' },
  endpoints: { group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints' },
  pods: { group: '', version: 'v1', plural: 'pods', kind: 'Pod' },
  configMaps: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap' },
  // Knative Eventing's sources (sources/): their controllers share this view.
  pingSources: { group: 'sources.knative.dev', version: 'v1', plural: 'pingsources', kind: 'PingSource' },
  apiServerSources: { group: 'sources.knative.dev', version: 'v1', plural: 'apiserversources', kind: 'ApiServerSource' },
  sinkBindings: { group: 'sources.knative.dev', version: 'v1', plural: 'sinkbindings', kind: 'SinkBinding' },
  containerSources: { group: 'sources.knative.dev', version: 'v1', plural: 'containersources', kind: 'ContainerSource' },
  // Knative Eventing's, which the flows controllers make and read.
  channels: { group: 'messaging.knative.dev', version: 'v1', plural: 'channels', kind: 'Channel' },
  inMemoryChannels: { group: 'messaging.knative.dev', version: 'v1', plural: 'inmemorychannels', kind: 'InMemoryChannel' },
  subscriptions: { group: 'messaging.knative.dev', version: 'v1', plural: 'subscriptions', kind: 'Subscription' },
  sequences: { group: 'flows.knative.dev', version: 'v1', plural: 'sequences', kind: 'Sequence' },
  parallels: { group: 'flows.knative.dev', version: 'v1', plural: 'parallels', kind: 'Parallel' },
} as const;
export type KindName = keyof typeof Kinds;

/** The labels Knative sets on what each kind makes (serving/pkg/apis/serving/register.go). */
export const Label = {
  service: 'serving.knative.dev/service',
  configuration: 'serving.knative.dev/configuration',
  configurationGeneration: 'serving.knative.dev/configurationGeneration',
  configurationUID: 'serving.knative.dev/configurationUID',
  revision: 'serving.knative.dev/revision',
  revisionUID: 'serving.knative.dev/revisionUID',
  route: 'serving.knative.dev/route',
  visibility: 'networking.knative.dev/visibility',
  /** On a Revision: `active` while a Route sends it traffic, `reserve` after. */
  routingState: 'serving.knative.dev/routingState',
} as const;

export const Annotation = {
  /** On a Revision: when its routingState last changed (RFC 3339). */
  routingStateModified: 'serving.knative.dev/routingStateModified',
  /** On a Revision: the Routes sending it traffic, comma-separated. */
  routes: 'serving.knative.dev/routes',
  /** On a Revision: `Proxy` or `Serve`, Knative's ServerlessService mode the autoscaler decides (autoscaling/burst-mode.ts). */
  serviceMode: 'networking.internal.knative.dev/serviceMode',
} as const;

/** Knative's default request timeout (config-defaults revision-timeout-seconds). */
export const DefaultTimeoutSeconds = 300;

export type Obj = KubeObject & { spec?: any; status?: any };

/** An ownerReference naming `owner` as the controller (blockOwnerDeletion, as Knative's kmeta.NewControllerRef). */
export const controlledBy = (owner: KubeObject, kind: { group: string; version: string; kind: string }) => ({
  apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, name: owner.metadata.name!, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true,
});

/** The key of the serving object of `kind` controlling `o` (what a change of a child wakes), if any. */
export const controllerKey = (kind: { group: string; kind: string }) => (o: KubeObject): string[] => {
  const ref = o.metadata.ownerReferences?.find((x) => x.controller === true && x.kind === kind.kind && x.apiVersion.startsWith(`${kind.group}/`));
  return ref ? [`${o.metadata.namespace ?? ''}/${ref.name}`] : [];
};

/** Whether `o` is controlled by `owner` (its controllerRef's uid). */
export const isControlledBy = (o: KubeObject, owner: KubeObject): boolean =>
  (o.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === owner.metadata.uid);

/** The controller's view of the kinds: the client's current store (a write after a CRD was replaced goes to the new one), and the shared caches. */
export interface ServingEnv {
  store(kind: KindName): ResourceClient;
  cache(kind: KindName): ObjectCache;
  ctx: ControllerContext;
}

const served = (ctx: ControllerContext, kind: KindName) => {
  const k = Kinds[kind];
  return ctx.client.find(k.group, k.version, k.plural);
};

/**
 * Starts `start` once every kind of `needs` is served (the CRDs `serve` installs are established
 * just after the controller manager starts; a server without them never starts it), looking again
 * whenever the set of served resources moves.
 */
export function whenServed(ctx: ControllerContext, needs: readonly KindName[], start: (env: ServingEnv) => Controller): Controller {
  let running: Controller | undefined;
  let stopped = false;
  const env: ServingEnv = {
    ctx,
    store: (kind) => {
      const s = served(ctx, kind);
      if (!s) throw new Error(`${Kinds[kind].plural}.${Kinds[kind].group} is not served`);
      return s;
    },
    cache: (kind) => ctx.caches.of(env.store(kind)),
  };
  let seen = -1;
  const check = (): void => {
    if (stopped || running || ctx.client.generation === seen) return;
    seen = ctx.client.generation;
    if (needs.every((k) => served(ctx, k))) {
      running = start(env);
      clearInterval(timer);
    }
  };
  const timer = setInterval(check, 250).unref();
  check();
  return {
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running?.stop();
    },
  };
}
