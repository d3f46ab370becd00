/**
 * ControllerRefManager (Kubernetes' controller_ref_manager.go): which objects a controller owns. An
 * object it controls that its selector no longer matches is released; an orphan its selector
 * matches is adopted (unless the controller or the orphan is being deleted), after checking once,
 * against the store rather than the cache, that the controller is still the one the cache holds.
 * Both are patches of ownerReferences with a resourceVersion precondition: a concurrent change wins.
 */
import type { KubeObject } from '../api/meta.js';
import { conflict } from '../api/errors.js';
import type { ResourceClient } from '../client/interface.js';
import type { ObjectCache } from './cache.js';
import { controllerUid } from './cache.js';
import { ignoreRaces, inNamespace } from './shared.js';
import { controllerRef } from './pods.js';

export interface ClaimOptions {
  owner: KubeObject;
  /** The owner's own store, for the fresh read before adopting. */
  ownerStore: ResourceClient;
  /** The dependents' cache. */
  cache: ObjectCache;
  matches(o: KubeObject): boolean;
  /** Which candidates may be claimed at all (the ReplicaSet controller claims only active pods). */
  eligible?(o: KubeObject): boolean;
}

/** What the owner controls now, or orphans in its namespace it could adopt. */
export const candidates = (cache: ObjectCache, owner: KubeObject): KubeObject[] => [
  ...cache.ownedBy(owner.metadata.uid!),
  ...cache.list(owner.metadata.namespace).filter((o) => controllerUid(o) === undefined),
];

const patchRefs = async (cache: ObjectCache, o: KubeObject, refs: NonNullable<KubeObject['metadata']['ownerReferences']>): Promise<KubeObject | undefined> => {
  const body = { metadata: { ownerReferences: refs.length ? refs : null, resourceVersion: o.metadata.resourceVersion } };
  try {
    const { object } = await cache.store.patch(inNamespace(o.metadata.namespace), o.metadata.name!, 'merge', body);
    cache.observe(object);
    return object;
  } catch (err) {
    ignoreRaces(err);
    return undefined;
  }
};

export const claim = async (c: ClaimOptions): Promise<KubeObject[]> => {
  const { owner } = c;
  const uid = owner.metadata.uid!;
  const deleting = Boolean(owner.metadata.deletionTimestamp);
  let fresh: Promise<void> | undefined;
  const canAdopt = () =>
    (fresh ??= c.ownerStore.get(inNamespace(owner.metadata.namespace), owner.metadata.name!).then((o) => {
      if (o.metadata.uid !== uid) throw conflict({ group: '', resource: '' }, owner.metadata.name!, `original ${owner.metadata.name} is gone: got uid ${o.metadata.uid}, wanted ${uid}`);
      if (o.metadata.deletionTimestamp) throw conflict({ group: '', resource: '' }, owner.metadata.name!, `${owner.metadata.name} has just been deleted`);
    }));
  const claimed: KubeObject[] = [];
  for (const o of candidates(c.cache, owner)) {
    if (c.eligible && !c.eligible(o)) continue;
    const refs = o.metadata.ownerReferences ?? [];
    if (controllerUid(o) === uid) {
      if (c.matches(o)) claimed.push(o);
      else if (!deleting) await patchRefs(c.cache, o, refs.filter((r) => r.uid !== uid));
      continue;
    }
    if (deleting || o.metadata.deletionTimestamp || !c.matches(o)) continue;
    await canAdopt();
    const adopted = await patchRefs(c.cache, o, [...refs, controllerRef(owner)]);
    if (adopted) claimed.push(adopted);
  }
  return claimed;
};
