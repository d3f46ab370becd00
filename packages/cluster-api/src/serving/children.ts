/**
 * How the serving controllers keep an object they make in line with what its owner wants: create
 * it when absent; when one of that name is there but owned by someone else, leave it alone (and say
 * so, as Knative's NotOwned reasons do); otherwise update the fields it manages when they differ.
 * The cache sees each write at once. What the cache holds is what the API server stored, defaulted
 * (a Deployment's revisionHistoryLimit, a container's terminationMessagePath …), so "differ" is
 * semantic: apimachinery's Semantic.DeepEqual by default (an empty list or map is none), or
 * DeepDerivative where Knative compares so (what the server filled in is no difference): never a
 * write that changes nothing.
 */
import { isApiError } from '../api/errors.js';
import type { KubeObject } from '../api/meta.js';
import { semanticEqual } from '../controllers/hash.js';
import { inNamespace } from '../controllers/shared.js';
import { isControlledBy, type KindName, Kinds, type Obj, type ServingEnv } from './kinds.js';

export type Owned = { ok: true; object: Obj } | { ok: false; message: string };

/** Whether `current` (as stored) already is what `desired` (as the controller makes it) asks for. */
export type Same = (desired: unknown, current: unknown) => boolean;

/**
 * Makes `desired` (name, namespace, labels, annotations, ownerReferences, and `fields` at the top
 * level: spec, data) so; `owner` is who must control an existing one; `same` compares each field.
 */
export async function ensureChild(env: ServingEnv, kind: KindName, owner: KubeObject, desired: Obj, fields: readonly string[], same: Same = semanticEqual): Promise<Owned> {
  const cache = env.cache(kind);
  const { namespace, name } = desired.metadata;
  const ctx = inNamespace(namespace);
  const current = cache.get(namespace, name!) as Obj | undefined;
  if (!current) {
    try {
      const created = await env.store(kind).create(ctx, structuredClone(desired));
      cache.observe(created.object);
      return { ok: true, object: created.object };
    } catch (err) {
      if (!(isApiError(err) && err.code === 409)) throw err;
      return { ok: true, object: (await env.store(kind).get(ctx, name!)) as Obj };
    }
  }
  if (!isControlledBy(current, owner)) return { ok: false, message: `There is an existing ${kindLabel(kind)} "${name}" that we do not own.` };
  const labels = { ...current.metadata.labels, ...desired.metadata.labels };
  const annotations = { ...current.metadata.annotations, ...desired.metadata.annotations };
  const unchanged = fields.every((f) => same((desired as Record<string, unknown>)[f], (current as Record<string, unknown>)[f]))
    && semanticEqual(labels, current.metadata.labels) && semanticEqual(annotations, current.metadata.annotations);
  if (unchanged) return { ok: true, object: current };
  const body: Record<string, unknown> = { ...current, metadata: { ...current.metadata, labels, annotations } };
  for (const f of fields) body[f] = (desired as Record<string, unknown>)[f];
  const updated = await env.store(kind).update(ctx, name!, body);
  cache.observe(updated.object);
  return { ok: true, object: updated.object };
}

const kindLabel = (kind: KindName): string => Kinds[kind].kind;
