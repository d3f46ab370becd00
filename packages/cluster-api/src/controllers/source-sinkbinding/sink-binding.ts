/**
 * Knative's SinkBinding reconciler (psbinding): the sink is resolved (SinkProvided,
 * `status.sinkUri`) and every subject — the object `subject` names, or those of its kind its
 * `selector` matches, in the binding's namespace (or `subject.namespace`) — has its pod template
 * bound (sources/binding.ts), written when it differs, so a new sink URL rolls the workload out
 * again. A subject created or changed later is bound as it is written by the SinkBinding webhook
 * (admission/knative-sources/sink-binding.ts), from the `status.sinkUri` written here first, and
 * by this controller when seen. The binding holds a finalizer so
 * that, deleted, it unbinds its subjects first, as Knative's does. A subject named but missing
 * makes the binding not Ready (`SubjectMissing`).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import { inNamespace, type Controller } from '../shared.js';
import type { Marked } from '../../serving/conditions.js';
import type { Obj, ServingEnv } from '../../serving/kinds.js';
import { selectorMatches } from '../../registry/kinds/label-selector.js';
import { bound } from '../../sources/binding.js';
import { findResource } from '../../sources/resources.js';
import { SinkResolver } from '../../sources/sink.js';
import { OidcDisabled, sinkProvided, sourceStatus } from '../../sources/status.js';

export const SinkBindingFinalizer = 'sinkbindings.sources.knative.dev';

interface Subject { apiVersion?: string; kind?: string; namespace?: string; name?: string; selector?: unknown }

export function startSinkBindingController(env: ServingEnv): Controller {
  const ctx = env.ctx;
  const bindings = env.cache('sinkBindings');
  const sinks = new SinkResolver(ctx, (key) => reconciler.enqueue(key));
  const watchedKinds = new Set<string>();

  const subjectOf = (b: Obj): Subject => (b.spec?.subject ?? {}) as Subject;

  /** A subject kind's cache, watched so that a change of one of its objects wakes the bindings naming that kind. */
  const subjectCache = (s: Subject) => {
    const store = findResource(ctx.client, s.apiVersion, s.kind);
    if (!store) return undefined;
    const cache = ctx.caches.of(store);
    const id = `${s.apiVersion}/${s.kind}`;
    if (!watchedKinds.has(id)) {
      watchedKinds.add(id);
      cache.on((_, o) => {
        for (const b of bindings.list(o.metadata.namespace ?? '')) {
          const bs = subjectOf(b as Obj);
          if (`${bs.apiVersion}/${bs.kind}` === id) reconciler.enqueue(objectKey(b));
        }
      });
    }
    return { store, cache };
  };

  /** The subjects of `b` (their kind's store and cache with them), or why there are none. */
  const subjects = async (b: Obj): Promise<{ found: KubeObject[]; store?: ReturnType<typeof subjectCache> } | { error: string }> => {
    const s = subjectOf(b);
    const where = s.namespace || b.metadata.namespace!;
    const served = subjectCache(s);
    if (!served) return { error: `the server does not serve ${s.kind} in ${s.apiVersion}` };
    await served.cache.synced;
    if (s.name) {
      const o = served.cache.get(where, s.name);
      return o ? { found: [o], store: served } : { error: `${s.kind} "${where}/${s.name}" not found` };
    }
    return { found: served.cache.list(where).filter((o) => selectorMatches(s.selector, o.metadata.labels ?? {})), store: served };
  };

  /** Writes each subject bound to `sinkUri` (unbound when undefined) where it differs. */
  const apply = async (found: KubeObject[], served: NonNullable<ReturnType<typeof subjectCache>>, sinkUri: string | undefined, ceOverrides: unknown): Promise<void> => {
    for (const o of found) {
      const want = bound(o, sinkUri, ceOverrides);
      if (isDeepStrictEqual(want, o)) continue;
      const written = await served.store.update(inNamespace(o.metadata.namespace), o.metadata.name!, want).catch((err: unknown) => {
        if (isApiError(err) && (err.code === 404 || err.code === 409)) return undefined; // seen again when it changes
        throw err;
      });
      if (written) served.cache.observe(written.object);
    }
  };

  const setFinalizers = async (b: Obj, finalizers: string[]): Promise<void> => {
    const written = await env.store('sinkBindings').update(inNamespace(b.metadata.namespace), b.metadata.name!, { ...b, metadata: { ...b.metadata, finalizers } });
    bindings.observe(written.object);
  };

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const b = bindings.get(namespace, name) as Obj | undefined;
    if (!b) return void sinks.untrack(key);
    const finalizers = b.metadata.finalizers ?? [];
    if (b.metadata.deletionTimestamp) {
      sinks.untrack(key);
      if (!finalizers.includes(SinkBindingFinalizer)) return;
      const found = await subjects(b);
      if ('found' in found && found.store) await apply(found.found, found.store, undefined, undefined);
      return setFinalizers(b, finalizers.filter((f) => f !== SinkBindingFinalizer));
    }
    if (!finalizers.includes(SinkBindingFinalizer)) return setFinalizers(b, [...finalizers, SinkBindingFinalizer]);
    const sink = await sinks.resolve(key, b.spec?.sink, namespace);
    const marked: Marked[] = [OidcDisabled, sinkProvided(sink)];
    const found = await subjects(b);
    if ('error' in found && 'uri' in sink) marked.push({ type: 'Ready', status: 'False', reason: 'SubjectMissing', message: found.error });
    // The status first: the SinkBinding webhook binds what is written next from its sinkUri.
    await writeStatus({ store: env.store('sinkBindings'), cache: bindings }, b, sourceStatus(b, marked, sink));
    if ('found' in found && 'uri' in sink) await apply(found.found, found.store!, sink.uri, b.spec?.ceOverrides);
  };

  const reconciler = startReconciler('source-sinkbinding-controller', reconcile, [{ cache: bindings, keys: (o) => [objectKey(o)] }], { log: ctx.log });
  return reconciler;
}
