/**
 * Knative's revision garbage collector (pkg/reconciler/gc), per Configuration: its non-active
 * revisions — neither its latest created or latest ready nor routed (`routingState: active`) — are
 * deleted, oldest first, while more than `min-non-active-revisions` remain, when stale: created longer
 * ago than `retain-since-create-time` and last routed (`routingStateModified`, else created) longer
 * ago than `retain-since-last-active-time` (both disabled: none is stale); then the oldest past
 * `max-non-active-revisions` go whatever their age. Settings from `config-gc` (serving/gc-config.ts).
 * A Configuration is looked at again when one of its revisions is due to turn stale.
 */
import { objectKey, splitKey } from '../context.js';
import { startReconciler, type Result } from '../reconciler.js';
import { ignoreRaces, inNamespace, type Controller } from '../shared.js';
import { GcConfigMap, gcSettings, type GcSettings } from '../../serving/gc-config.js';
import { Annotation, controllerKey, Kinds, Label, type Obj, type ServingEnv } from '../../serving/kinds.js';

/** Looked at again at least this often while something waits on time (an hour, as Knative's resync). */
const MaxWaitMs = 3600_000;

const time = (t: string | undefined): number => (t ? Date.parse(t) : 0) || 0;

/** How long until `rev` is stale (0: it is); undefined: never, by time. */
export function untilStale(rev: Obj, gc: GcSettings, now: number): number | undefined {
  if (gc.retainSinceCreateMs === undefined && gc.retainSinceLastActiveMs === undefined) return undefined;
  const created = time(rev.metadata.creationTimestamp);
  const active = time(rev.metadata.annotations?.[Annotation.routingStateModified]) || created;
  return Math.max(0, gc.retainSinceCreateMs === undefined ? 0 : created + gc.retainSinceCreateMs - now, gc.retainSinceLastActiveMs === undefined ? 0 : active + gc.retainSinceLastActiveMs - now);
}

export function startRevisionGc(env: ServingEnv): Controller {
  const configurations = env.cache('configurations');
  const revisions = env.cache('revisions');
  const configMaps = env.cache('configMaps');

  const reconcile = async (key: string): Promise<Result | void> => {
    const { namespace, name } = splitKey(key);
    const config = configurations.get(namespace, name) as Obj | undefined;
    if (!config || config.metadata.deletionTimestamp) return;
    const gc = gcSettings((configMaps.get(GcConfigMap.namespace, GcConfigMap.name) as Obj & { data?: Record<string, string> } | undefined)?.data);
    const keep = new Set([config.status?.latestCreatedRevisionName, config.status?.latestReadyRevisionName]);
    const nonActive = (revisions.ownedBy(config.metadata.uid!) as Obj[])
      .filter((r) => !r.metadata.deletionTimestamp && !keep.has(r.metadata.name) && r.metadata.labels?.[Label.routingState] !== 'active')
      .sort((a, b) => time(a.metadata.creationTimestamp) - time(b.metadata.creationTimestamp) || a.metadata.name!.localeCompare(b.metadata.name!));
    if (nonActive.length <= gc.minNonActive) return;
    const now = Date.now();
    const doomed: Obj[] = [];
    const left: Obj[] = [];
    let waitMs: number | undefined;
    for (const rev of nonActive) {
      const wait = untilStale(rev, gc, now);
      if (nonActive.length - doomed.length > gc.minNonActive && wait === 0) doomed.push(rev);
      else {
        left.push(rev);
        if (wait) waitMs = Math.min(waitMs ?? wait, wait);
      }
    }
    if (gc.maxNonActive !== undefined && left.length > gc.maxNonActive) doomed.push(...left.slice(0, left.length - gc.maxNonActive));
    for (const rev of doomed) {
      const deleted = await env.store('revisions').delete(inNamespace(namespace), rev.metadata.name!, { preconditions: { uid: rev.metadata.uid } }).catch((err: unknown) => (ignoreRaces(err), undefined));
      if (deleted) revisions.observeDelete(deleted.object, deleted.deleted);
    }
    if (waitMs !== undefined) return { requeueAfter: Math.min(waitMs + 1000, MaxWaitMs) };
  };

  const owner = controllerKey(Kinds.configurations);
  return startReconciler('serving-gc-controller', reconcile, [
    { cache: configurations, keys: (o) => [objectKey(o)] },
    { cache: revisions, keys: owner },
    { cache: configMaps, keys: (o) => (o.metadata.namespace === GcConfigMap.namespace && o.metadata.name === GcConfigMap.name ? configurations.list().map(objectKey) : []) },
  ], { log: env.ctx.log });
}
