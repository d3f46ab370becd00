/**
 * Knative's Route reconciler, with the gateway (serving/gateway/) as its ingress: each traffic
 * target resolves to a revision — `configurationName` (a Service's `latestRevision: true`) to the
 * Configuration's latest ready revision, `revisionName` to that Revision once Ready — and the
 * resolved list becomes `status.traffic` (with a URL per tag), which the gateway routes by. Until
 * every target resolves the traffic already served stays as it was (AllTrafficAssigned says why).
 * `status.url` from the domain config (serving/domain.ts), `status.address.url` the cluster-local
 * name; Ready when all traffic is assigned. Each revision it sends traffic to is marked as Knative's
 * labeler marks it (`serving.knative.dev/routingState` active, the Routes in
 * `serving.knative.dev/routes`); one it stops sending to is `reserve` once no Route does, with the
 * time in `serving.knative.dev/routingStateModified` (what revision garbage collection reads);
 * a Route deleted (alone, its Service kept) leaves its revisions so too. Its placeholder Service
 * (an ExternalName to the gateway's) makes the cluster-local name resolve in cluster DNS.
 */
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { conditionOf, conditionSet, type Marked } from '../../serving/conditions.js';
import { clusterLocalHost, DomainConfigMap, domainFor, routeHost } from '../../serving/domain.js';
import { Annotation, controlledBy, Kinds, Label, type Obj, type ServingEnv } from '../../serving/kinds.js';
import { ensureChild } from '../../serving/children.js';
import { GatewayService } from '../../serve/host-services.js';
import { timestamp } from '../../registry/generic/meta.js';
import { ignoreRaces, inNamespace } from '../shared.js';

interface Target { configurationName?: string; revisionName?: string; latestRevision?: boolean; percent?: number; tag?: string }
type Resolved = { ok: true; target: Record<string, unknown> } | { ok: false; condition: Marked };

export function startRouteController(env: ServingEnv): Controller {
  const routes = env.cache('routes');
  const configurations = env.cache('configurations');
  const revisions = env.cache('revisions');
  const configMaps = env.cache('configMaps');
  env.cache('k8sServices');

  const resolve = (ns: string, t: Target): Resolved => {
    let revisionName = t.revisionName;
    if (!revisionName) {
      const config = configurations.get(ns, t.configurationName ?? '') as Obj | undefined;
      if (!config) return { ok: false, condition: { type: 'AllTrafficAssigned', status: 'False', reason: 'ConfigurationMissing', message: `Configuration "${t.configurationName}" referenced in traffic not found.` } };
      revisionName = config.status?.latestReadyRevisionName;
      if (!revisionName) {
        const failed = conditionOf(config, 'Ready')?.status === 'False';
        return { ok: false, condition: { type: 'AllTrafficAssigned', status: failed ? 'False' : 'Unknown', reason: 'RevisionMissing', message: `Configuration "${t.configurationName}" ${failed ? 'does not have any ready Revision' : 'is waiting for a Revision to become ready'}.` } };
      }
    } else {
      const rev = revisions.get(ns, revisionName) as Obj | undefined;
      if (!rev) return { ok: false, condition: { type: 'AllTrafficAssigned', status: 'False', reason: 'RevisionMissing', message: `Revision "${revisionName}" referenced in traffic not found.` } };
      const ready = conditionOf(rev, 'Ready');
      if (ready?.status !== 'True')
        return { ok: false, condition: { type: 'AllTrafficAssigned', status: ready?.status === 'False' ? 'False' : 'Unknown', reason: 'RevisionMissing', message: `Revision "${revisionName}" ${ready?.status === 'False' ? 'failed to become ready' : 'is not yet ready'}.` } };
    }
    return { ok: true, target: { ...(t.tag && { tag: t.tag }), revisionName, latestRevision: !t.revisionName, percent: t.percent ?? 0 } };
  };

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const route = routes.get(namespace, name) as Obj | undefined;
    // A Route that is gone routes nothing: the revisions it sent traffic to are no longer routed by it.
    if (!route || route.metadata.deletionTimestamp) return void (await markRouting(namespace, name, new Set()));
    const domain = domainFor(route.metadata.labels ?? {}, (configMaps.get(DomainConfigMap.namespace, DomainConfigMap.name) as Obj & { data?: Record<string, string> } | undefined)?.data);
    const url = (tag?: string) => `http://${routeHost(route, domain, tag)}`;
    const results = ((route.spec?.traffic ?? []) as Target[]).map((t) => resolve(namespace, t));
    const failed = results.find((r): r is Extract<Resolved, { ok: false }> => !r.ok);
    const traffic = failed ? route.status?.traffic : results.map((r) => {
      const t = (r as Extract<Resolved, { ok: true }>).target;
      return t.tag ? { ...t, url: url(t.tag as string) } : t;
    });
    const marked: Marked[] = [
      failed ? failed.condition : { type: 'AllTrafficAssigned', status: 'True' },
      failed && !traffic ? { type: 'IngressReady', status: 'Unknown', reason: 'Uninitialized', message: 'Waiting for traffic to be assigned.' } : { type: 'IngressReady', status: 'True' },
      { type: 'CertificateProvisioned', status: 'True', reason: 'TLSNotEnabled', message: 'autoTLS is not enabled' },
    ];
    await writeStatus({ store: env.store('routes'), cache: routes }, route, {
      observedGeneration: route.metadata.generation,
      conditions: conditionSet(route.status?.conditions, marked),
      url: url(),
      address: { url: `http://${clusterLocalHost(name, namespace)}` },
      ...(traffic && { traffic }),
    });
    if (traffic) await markRouting(namespace, name, new Set((traffic as { revisionName: string }[]).map((t) => t.revisionName)));
    await placeholder(route);
  };

  /**
   * Knative's placeholder Service: `<route>` in the Route's namespace, an ExternalName for the
   * gateway's Service, so the cluster-local name resolves in cluster DNS (and reaches the gateway,
   * which routes it by Host). Made once, owned by the Route; a Service of that name the Route does not
   * own is left alone.
   */
  const placeholder = async (route: Obj): Promise<void> => {
    const { name, namespace } = route.metadata as { name: string; namespace: string };
    const service = route.metadata.labels?.[Label.service];
    await ensureChild(env, 'k8sServices', route, {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name, namespace, labels: { [Label.route]: name, ...(service && { [Label.service]: service }) }, ownerReferences: [controlledBy(route, Kinds.routes)] },
      spec: { type: 'ExternalName', externalName: `${GatewayService.name}.${GatewayService.namespace}.svc.cluster.local`, sessionAffinity: 'None', ports: [{ name: 'http2', port: 80, protocol: 'TCP', targetPort: 80 }] },
    }, []);
  };

  /** The routing state of the namespace's revisions, as this Route's traffic leaves it. */
  const markRouting = async (namespace: string, route: string, routed: ReadonlySet<string>): Promise<void> => {
    for (const rev of revisions.list(namespace) as Obj[]) {
      const before = (rev.metadata.annotations?.[Annotation.routes] ?? '').split(',').filter(Boolean);
      const after = routed.has(rev.metadata.name!) ? [...new Set([...before, route])].sort() : before.filter((r) => r !== route);
      const state = after.length > 0 ? 'active' : before.length > 0 || rev.metadata.labels?.[Label.routingState] ? 'reserve' : undefined;
      if (after.join(',') === before.join(',') && state === rev.metadata.labels?.[Label.routingState]) continue;
      const patch = {
        metadata: {
          labels: { [Label.routingState]: state ?? null },
          annotations: {
            [Annotation.routes]: after.length > 0 ? after.join(',') : null,
            ...(state !== rev.metadata.labels?.[Label.routingState] && { [Annotation.routingStateModified]: timestamp() }),
          },
        },
      };
      const written = await env.store('revisions').patch(inNamespace(namespace), rev.metadata.name!, 'merge', patch).catch((err: unknown) => (ignoreRaces(err), undefined));
      if (written) revisions.observe(written.object);
    }
  };

  // A Configuration or Revision wakes the Routes of its namespace that name it; the domain config wakes every Route.
  const referencing = (field: 'revisionName' | 'configurationName') => (o: Obj) =>
    routes.list(o.metadata.namespace).filter((r) => ((r as Obj).spec?.traffic ?? []).some((t: Target) => t[field] === o.metadata.name)).map(objectKey);
  return startReconciler('serving-route-controller', reconcile, [
    { cache: routes, keys: (o) => [objectKey(o)] },
    { cache: configurations, keys: referencing('configurationName') },
    { cache: revisions, keys: referencing('revisionName') },
    { cache: configMaps, keys: (o) => (o.metadata.namespace === DomainConfigMap.namespace && o.metadata.name === DomainConfigMap.name ? routes.list().map(objectKey) : []) },
  ], { log: env.ctx.log });
}
