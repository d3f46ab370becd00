/**
 * ControllerRevisions, the history StatefulSets and DaemonSets keep (pkg/controller/history): each
 * revision is the owner's pod template as a strategic-merge patch (`{spec: {template: {…,
 * $patch: replace}}}`, what `kubectl rollout undo` applies), named `<owner>-<hash>`, labelled with
 * the template's labels and its hash, numbered in order. An existing revision equal to the current
 * template is reused (renumbered to be the newest when it is not); a name taken by another template
 * bumps the owner's collisionCount. Revisions no pod uses are pruned beyond revisionHistoryLimit.
 */
import type { KubeObject } from '../api/meta.js';
import { isApiError } from '../api/errors.js';
import { num, obj, spec } from '../registry/kinds/common.js';
import type { ObjectCache } from './cache.js';
import { claim } from './claim.js';
import type { Served } from './context.js';
import { computeHash, semanticEqual } from './hash.js';
import { ignoreRaces, inNamespace } from './shared.js';
import { controllerRef } from './pods.js';

export const RevisionHashLabel = 'controller.kubernetes.io/hash';

/** The owner's template as a revision's data (getPatch). */
export const templatePatch = (owner: KubeObject): Record<string, unknown> => ({
  spec: { template: { ...structuredClone(obj(spec(owner).template)), $patch: 'replace' } },
});

export const revisionNumber = (cr: KubeObject): number => num(cr.revision);

export interface History {
  revisions: Served;
  ownerStore: Served['store'];
}

/** The owner's revisions (adopting orphans its selector matches), oldest first. */
export const ownedRevisions = async (h: History, owner: KubeObject, matches: (cr: KubeObject) => boolean): Promise<KubeObject[]> =>
  (await claim({ owner, ownerStore: h.ownerStore, cache: h.revisions.cache, matches })).sort((a, b) => revisionNumber(a) - revisionNumber(b));

/** How an owner names and labels its revisions: StatefulSets hash the revision's data, DaemonSets their template. */
export interface Naming {
  hash(collisionCount: number | undefined): string;
  labels(hash: string): Record<string, string>;
}

/** StatefulSet: HashControllerRevision over the data, labelled `controller.kubernetes.io/hash`. */
export const dataNaming = (owner: KubeObject): Naming => ({
  hash: (count) => computeHash(templatePatch(owner), count),
  labels: (hash) => ({ ...(obj(obj(obj(spec(owner).template).metadata).labels) as Record<string, string>), [RevisionHashLabel]: hash }),
});

/**
 * The revision for the owner's current template: reused, renumbered or created. Answers it and the
 * collision count to record (changed when a name was taken by another template).
 */
export const currentRevision = async (
  h: History, owner: KubeObject, revisions: KubeObject[], collisionCount: number, naming: Naming,
): Promise<{ revision: KubeObject; collisionCount: number }> => {
  const data = templatePatch(owner);
  const next = Math.max(0, ...revisions.map(revisionNumber)) + 1;
  const equal = revisions.filter((cr) => semanticEqual(cr.data, data));
  const cache: ObjectCache = h.revisions.cache;
  const ctx = inNamespace(owner.metadata.namespace);
  if (equal.length > 0) {
    const newest = equal[equal.length - 1]!;
    if (newest === revisions[revisions.length - 1]) return { revision: newest, collisionCount };
    const { object } = await h.revisions.store.patch(ctx, newest.metadata.name!, 'merge', { revision: next });
    cache.observe(object);
    return { revision: object, collisionCount };
  }
  for (let count = collisionCount; ; count++) {
    const hash = naming.hash(count || undefined);
    const cr: KubeObject = {
      apiVersion: 'apps/v1', kind: 'ControllerRevision',
      metadata: { name: `${owner.metadata.name}-${hash}`, namespace: owner.metadata.namespace, labels: naming.labels(hash), ownerReferences: [controllerRef(owner)] },
      data, revision: next,
    };
    try {
      const { object } = await h.revisions.store.create(ctx, cr);
      cache.observe(object);
      return { revision: object, collisionCount: count };
    } catch (err) {
      if (!isApiError(err) || err.reason !== 'AlreadyExists') throw err;
      const found = await h.revisions.store.get(ctx, cr.metadata.name!);
      if (semanticEqual(found.data, data) && found.metadata.ownerReferences?.some((r) => r.uid === owner.metadata.uid)) return { revision: found, collisionCount: count };
    }
  }
};

/** truncateHistory: revisions neither live nor among the newest `limit` others are deleted. */
export const truncateHistory = async (h: History, revisions: KubeObject[], live: ReadonlySet<string>, limit: number): Promise<void> => {
  const old = revisions.filter((cr) => !live.has(cr.metadata.name!));
  for (const cr of old.slice(0, Math.max(0, old.length - limit))) {
    const written = await h.revisions.store.delete(inNamespace(cr.metadata.namespace), cr.metadata.name!, { preconditions: { uid: cr.metadata.uid } }).catch((e: unknown) => void ignoreRaces(e));
    if (written) h.revisions.cache.observeDelete(written.object, written.deleted);
  }
};

/** The owner as of a revision: its template replaced by the revision's (ApplyRevision). */
export const applyRevision = (owner: KubeObject, cr: KubeObject): KubeObject => {
  const template = { ...obj(obj(obj(cr.data).spec).template) };
  delete template.$patch;
  return { ...owner, spec: { ...obj(owner.spec), template } };
};
