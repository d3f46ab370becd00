/**
 * Knative's Service reconciler: a Service is a Configuration and a Route of its name, both
 * controlled by it — the Configuration's template the Service's, the Route's traffic the Service's
 * (default: all of it to the latest ready revision) — and its status theirs: the Configuration's
 * latest created and ready revisions (ConfigurationsReady), the Route's url, address and traffic
 * (RoutesReady), Ready when both are and each has observed its latest generation.
 */
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { ensureChild } from '../../serving/children.js';
import { conditionOf, conditionSet, type Marked } from '../../serving/conditions.js';
import { controlledBy, controllerKey, Kinds, Label, type Obj, type ServingEnv } from '../../serving/kinds.js';

/** Knative copies these of the Service's metadata to what it makes, and no kubectl bookkeeping. */
const propagated = (m: Record<string, string> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => k !== 'kubectl.kubernetes.io/last-applied-configuration'));

/** Knative's Service → Route traffic: a `latestRevision` target names the Service's Configuration. */
const routeTraffic = (svc: Obj): Obj[] => {
  const traffic: Obj[] = svc.spec?.traffic?.length ? svc.spec.traffic : [{ latestRevision: true, percent: 100 }];
  return traffic.map((t) => (t.latestRevision === true ? { ...t, configurationName: svc.metadata.name } : t));
};

/** A child's condition as the Service's: Unknown while it has not observed its latest generation. */
const childReady = (type: string, kind: string, child: Obj | undefined): Marked => {
  if (!child) return { type, status: 'Unknown', reason: 'Outdated' };
  if ((child.status?.observedGeneration ?? 0) !== child.metadata.generation) return { type, status: 'Unknown', reason: 'Outdated', message: `${kind} "${child.metadata.name}" has not yet observed its generation ${child.metadata.generation}` };
  const ready = conditionOf(child, 'Ready');
  if (!ready) return { type, status: 'Unknown' };
  return { type, status: ready.status, ...(ready.reason && { reason: ready.reason }), ...(ready.message && { message: ready.message }) };
};

export function startServiceController(env: ServingEnv): Controller {
  const services = env.cache('services');
  const configurations = env.cache('configurations');
  const routes = env.cache('routes');

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const svc = services.get(namespace, name) as Obj | undefined;
    if (!svc || svc.metadata.deletionTimestamp) return;
    const meta = (extra: Record<string, string> = {}) => ({
      name, namespace,
      labels: { ...propagated(svc.metadata.labels), [Label.service]: name, ...extra },
      annotations: propagated(svc.metadata.annotations),
      ownerReferences: [controlledBy(svc, Kinds.services)],
    });
    const config = await ensureChild(env, 'configurations', svc, { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', metadata: meta(), spec: { template: svc.spec?.template ?? {} } }, ['spec']);
    const route = await ensureChild(env, 'routes', svc, { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: meta(), spec: { traffic: routeTraffic(svc) } }, ['spec']);
    const c = config.ok ? config.object : undefined;
    const r = route.ok ? route.object : undefined;
    const marked: Marked[] = [
      config.ok ? childReady('ConfigurationsReady', 'Configuration', c) : { type: 'ConfigurationsReady', status: 'False', reason: 'NotOwned', message: config.message },
      route.ok ? childReady('RoutesReady', 'Route', r) : { type: 'RoutesReady', status: 'False', reason: 'NotOwned', message: route.message },
    ];
    const cs = c?.status ?? {};
    const rs = r?.status ?? {};
    await writeStatus({ store: env.store('services'), cache: services }, svc, {
      observedGeneration: svc.metadata.generation,
      conditions: conditionSet(svc.status?.conditions, marked),
      ...(cs.latestCreatedRevisionName && { latestCreatedRevisionName: cs.latestCreatedRevisionName }),
      ...(cs.latestReadyRevisionName && { latestReadyRevisionName: cs.latestReadyRevisionName }),
      ...(rs.url && { url: rs.url }),
      ...(rs.address && { address: rs.address }),
      ...(rs.traffic && { traffic: rs.traffic }),
    });
  };

  // A Configuration or Route wakes the Service it belongs to.
  const owner = controllerKey(Kinds.services);
  return startReconciler('serving-service-controller', reconcile, [
    { cache: services, keys: (o) => [objectKey(o)] },
    { cache: configurations, keys: owner },
    { cache: routes, keys: owner },
  ], { log: env.ctx.log });
}
