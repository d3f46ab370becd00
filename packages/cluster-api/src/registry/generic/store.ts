/**
 * The generic store (Kubernetes' registry/generic/registry.Store): every kind's get, list, create,
 * update, patch, delete and watch over the byte-level Storage. Per-kind behaviour comes only from the
 * definition's strategy; cross-kind rules from strategy.ts.
 */
import type { DeleteOptions, KubeList, KubeObject } from '../../api/meta.js';
import { isStorageError } from '../../storage/errors.js';
import type { KeyValue, Storage } from '../../storage/interface.js';
import type {
  ConnectAnswer, ListQuery, PatchType, RequestContext, ResourceDefinition, ResourceStore, ReviewServices, Subresource, Verb, WatchQuery, WatchSink,
} from '../definition.js';
import { checkDeleteOptions, deletePrecondition, planDelete, releasedByUpdate } from './deletion.js';
import { ApiError, badRequest, conflict, forbidden, fromStorageError, isApiError, methodNotAllowed, notFound, OptimisticLockMessage } from '../../api/errors.js';
import { listEncoded, listObjects } from './list.js';
import { clone, decode, encode, encodeWithResourceVersion, groupResource, isObject, objectKey, rememberWritten, sameBytes } from './meta.js';
import { applyConfiguration, recordUpdate } from './managed-fields.js';
import { applyPatch, checkPatchShape } from './patch.js';
import { requestedReplicas, toScale } from '../subresources/scale.js';
import { decodeBody, matchNamespace, prepareCreate, prepareUpdate } from './strategy.js';
import { watchObjects, type WatchDeps } from './watch.js';

/** What a store needs from the rest of the registry. */
export interface StoreDeps {
  /** For namespaced creates: 404 when the namespace does not exist, 403 while it is being deleted. */
  namespacePhase(namespace: string): Promise<'Absent' | 'Active' | 'Terminating'>;
  /** The registry's one watch cache and bookmark timing. */
  watch: WatchDeps;
  /** What review kinds' answers consult. */
  reviews: ReviewServices;
}

/** The manager of writes made inside the server (controllers), which name none. */
const InternalManager = 'cluster-api';

/** Conflicts retried before giving up when the client sent no resourceVersion. */
const MaxAttempts = 16;

type Apply = (old: KubeObject) => KubeObject;

/** The body of a PUT, or the result of a PATCH, renames nothing (Kubernetes' checkName, 400). */
const checkName = (obj: KubeObject, name: string): void => {
  if (obj.metadata.name !== name) {
    throw badRequest(`the name of the object (${obj.metadata.name ?? ''}) does not match the name on the URL (${name})`);
  }
};

/**
 * The object just written, as a read would return it, without parsing the bytes back; its compact
 * JSON is remembered from the bytes written (`bytes`: the storage may not echo the value).
 */
const withRevision = (def: ResourceDefinition, obj: KubeObject, kv: KeyValue, bytes: Uint8Array): KubeObject => {
  obj.metadata.resourceVersion = String(kv.modRevision);
  rememberWritten(def, obj, { ...kv, value: bytes });
  return obj;
};

export class GenericStore implements ResourceStore {
  private readonly gr;
  constructor(
    readonly definition: ResourceDefinition,
    private readonly storage: Storage,
    private readonly deps: StoreDeps,
  ) {
    this.gr = groupResource(definition);
  }

  /** Routes derive from verbs too; the store refuses on its own so no caller can bypass the table. */
  private allow(verb: Verb, subresource?: Subresource): void {
    if (!this.definition.verbs.includes(verb)) throw methodNotAllowed(verb, this.gr);
    if (subresource && !this.definition.subresources?.includes(subresource)) {
      throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    }
  }

  private key(ctx: RequestContext, name: string): string {
    if (this.definition.namespaced && !ctx.namespace) throw badRequest('a namespace is required for a namespaced resource');
    try {
      return objectKey(this.definition, ctx.namespace, name);
    } catch {
      // No object can have a name that is not a key segment: as Kubernetes would, say it is not there.
      throw notFound(this.gr, name);
    }
  }

  private async read(ctx: RequestContext, name: string): Promise<KeyValue> {
    const kv = await this.storage.get(this.key(ctx, name)).catch((e: unknown) => { throw fromStorageError(e, this.gr, name); });
    if (!kv) throw notFound(this.gr, name);
    return kv;
  }

  async get(ctx: RequestContext, name: string, subresource?: Subresource): Promise<KubeObject> {
    this.allow('get', subresource);
    const object = decode(await this.read(ctx, name));
    return subresource === 'scale' ? toScale(this.definition, object) : object;
  }

  getEncoded(ctx: RequestContext, name: string): Uint8Array | Promise<Uint8Array> {
    this.allow('get');
    let now: KeyValue | null | undefined;
    try {
      now = this.storage.getNow?.(this.key(ctx, name));
    } catch (err) {
      throw fromStorageError(err, this.gr, name);
    }
    if (now === null) throw notFound(this.gr, name);
    if (now) return Buffer.concat(encodeWithResourceVersion(this.definition, now));
    return this.read(ctx, name).then((kv) => Buffer.concat(encodeWithResourceVersion(this.definition, kv)));
  }

  async list(ctx: RequestContext, query: ListQuery): Promise<KubeList> {
    this.allow('list');
    return listObjects(this.storage, this.definition, ctx, query);
  }

  async listEncoded(ctx: RequestContext, query: ListQuery): Promise<Uint8Array> {
    this.allow('list');
    return listEncoded(this.storage, this.definition, ctx, query);
  }

  async create(ctx: RequestContext, body: unknown): Promise<KubeObject> {
    this.allow('create');
    const obj = prepareCreate(this.definition, ctx, body);
    const { name = '', namespace } = obj.metadata;
    if (this.definition.namespaced && namespace) await this.checkNamespace(namespace, name || obj.metadata.generateName || '');
    const undo = await this.definition.allocator?.allocate(obj, this.storage);
    if (ctx.dryRun || this.definition.ephemeral) {
      await undo?.();
      if (this.definition.answer) obj.status = await this.definition.answer(obj, this.deps.reviews, ctx);
      return obj;
    }
    try {
      const bytes = encode(obj);
      return withRevision(this.definition, obj, await this.storage.create(objectKey(this.definition, namespace, name), bytes), bytes);
    } catch (err) {
      await undo?.();
      throw fromStorageError(err, this.gr, name);
    }
  }

  /** Kubernetes' NamespaceLifecycle admission, with its exact message and cause. */
  private async checkNamespace(namespace: string, name: string): Promise<void> {
    // A store outage here must surface as 503 + retryAfterSeconds like any other storage call.
    const phase = await this.deps.namespacePhase(namespace).catch((err: unknown) => {
      throw fromStorageError(err, { group: '', resource: 'namespaces' }, namespace);
    });
    if (phase === 'Absent') throw notFound({ group: '', resource: 'namespaces' }, namespace);
    if (phase === 'Terminating') {
      const err = forbidden(this.gr, name, `unable to create new content in namespace ${namespace} because it is being terminated`);
      throw new ApiError(403, 'Forbidden', err.message, {
        ...err.details,
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  }

  async update(ctx: RequestContext, name: string, body: unknown, subresource?: Subresource): Promise<KubeObject> {
    this.allow('update', subresource);
    if (subresource === 'scale') {
      const { replicas, resourceVersion } = requestedReplicas(body, name);
      const out = await this.guaranteedUpdate(ctx, name, resourceVersion, (old) => this.scaled(old, replicas), subresource);
      return toScale(this.definition, out.object);
    }
    const incoming = decodeBody(this.definition, body);
    checkName(incoming, name);
    matchNamespace(this.definition, ctx, incoming.metadata);
    const precondition = incoming.metadata.resourceVersion || undefined;
    const out = await this.guaranteedUpdate(ctx, name, precondition, (old) => prepareUpdate(this.definition, incoming, old, subresource), subresource);
    return out.object;
  }

  async patch(ctx: RequestContext, name: string, type: PatchType, patch: unknown, subresource?: Subresource): Promise<KubeObject> {
    if (type === 'apply') return (await this.apply(ctx, name, patch, subresource)).object;
    this.allow('patch', subresource);
    checkPatchShape(type, patch);
    if (subresource === 'scale') {
      const out = await this.guaranteedUpdate(ctx, name, undefined, (old) => {
        const { replicas, resourceVersion } = requestedReplicas(applyPatch(type, toScale(this.definition, old), patch, this.definition), name);
        if (resourceVersion !== undefined && resourceVersion !== old.metadata.resourceVersion) throw conflict(this.gr, name, OptimisticLockMessage);
        return this.scaled(old, replicas);
      }, subresource);
      return toScale(this.definition, out.object);
    }
    const out = await this.guaranteedUpdate(ctx, name, undefined, (old) => {
      const patched = applyPatch(type, old, patch, this.definition);
      // A resourceVersion in the patch is a precondition (kubectl apply/edit rely on it).
      if (patched.metadata?.resourceVersion !== old.metadata.resourceVersion) {
        throw conflict(this.gr, name, OptimisticLockMessage);
      }
      const incoming = decodeBody(this.definition, patched);
      checkName(incoming, name);
      return prepareUpdate(this.definition, incoming, old, subresource);
    }, subresource);
    return out.object;
  }

  /**
   * Server-side apply: the configuration merged into the object by field ownership (managed-fields.ts),
   * or the object created from it. A delete or create racing the apply is retried.
   */
  async apply(ctx: RequestContext, name: string, config: unknown, subresource?: Subresource): Promise<{ object: KubeObject; created: boolean }> {
    this.allow('patch', subresource);
    checkPatchShape('apply', config);
    const incoming = decodeBody(this.definition, config);
    checkName(incoming, name);
    matchNamespace(this.definition, ctx, incoming.metadata);
    const request = { manager: ctx.fieldManager ?? '', force: ctx.force ?? false, subresource };
    const precondition = incoming.metadata.resourceVersion || undefined;
    for (let attempt = 0; attempt < MaxAttempts; attempt++) {
      try {
        const out = await this.guaranteedUpdate(ctx, name, precondition, (old) =>
          prepareUpdate(this.definition, applyConfiguration(this.definition, old, incoming, request), old, subresource), 'applied');
        return { object: out.object, created: false };
      } catch (err) {
        if (!isApiError(err) || err.code !== 404 || subresource) throw err;
      }
      try {
        return { object: await this.create(ctx, applyConfiguration(this.definition, undefined, incoming, request)), created: true };
      } catch (err) {
        if (!isApiError(err) || err.reason !== 'AlreadyExists') throw err;
      }
    }
    throw conflict(this.gr, name, OptimisticLockMessage);
  }

  async connect(ctx: RequestContext, name: string, subresource: Subresource, query: URLSearchParams): Promise<ConnectAnswer> {
    this.allow('get', subresource);
    if (!this.definition.connect) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    return this.definition.connect(decode(await this.read(ctx, name)), subresource, query);
  }

  /** POST on a subresource with an action (a Pod's binding): the body checked, then a compare-and-swap update. */
  async createSubresource(ctx: RequestContext, name: string, subresource: Subresource, body: unknown): Promise<KubeObject> {
    this.allow('create', subresource);
    const action = this.definition.actions?.[subresource];
    if (!action) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
    const checked = action.check(body, name);
    const out = await this.guaranteedUpdate(ctx, name, undefined, (old) => action.apply(old, checked), subresource);
    return action.answer(out.object);
  }

  /** `old` with spec.replicas set, through the main resource's update rules (generation, validation). */
  private scaled(old: KubeObject, replicas: number): KubeObject {
    const next = clone(old);
    next.spec = { ...(isObject(next.spec) ? next.spec : {}), replicas };
    return prepareUpdate(this.definition, next, old);
  }

  /**
   * Read, apply, compare-and-swap on modRevision; on a conflict re-read and re-apply, unless the
   * client pinned a resourceVersion (then the conflict is theirs: 409). Unchanged bytes are not written.
   * `written`: the subresource written through, for managedFields; 'applied' when `apply` recorded them itself.
   */
  private async guaranteedUpdate(ctx: RequestContext, name: string, precondition: string | undefined, apply: Apply, written?: Subresource | 'applied') {
    const key = this.key(ctx, name);
    for (let attempt = 0; attempt < MaxAttempts; attempt++) {
      const kv = await this.read(ctx, name);
      const old = decode(kv);
      if (precondition !== undefined && precondition !== old.metadata.resourceVersion) {
        throw conflict(this.gr, name, OptimisticLockMessage);
      }
      const next = apply(old);
      if (written !== 'applied') recordUpdate(this.definition, old, next, ctx.fieldManager ?? InternalManager, written);
      if (releasedByUpdate(this.definition, next, old)) return this.finish(ctx, key, kv, next);
      const held = await this.definition.allocator?.reallocate?.(next, old, this.storage);
      const bytes = encode(next);
      if (sameBytes(bytes, kv.value) || ctx.dryRun) {
        await held?.undo();
        if (ctx.dryRun) return { object: { ...next, metadata: { ...next.metadata, resourceVersion: old.metadata.resourceVersion } }, deleted: false };
        return { object: old, deleted: false };
      }
      try {
        const written = withRevision(this.definition, next, await this.storage.update(key, bytes, kv.modRevision), bytes);
        await held?.commit();
        return { object: written, deleted: false };
      } catch (err) {
        await held?.undo();
        if (!isStorageError(err, 'Conflict')) throw fromStorageError(err, this.gr, name);
      }
    }
    throw conflict(this.gr, name, OptimisticLockMessage);
  }

  /** The last finalizer of a deleting object is gone: remove it, as Kubernetes' ShouldDeleteDuringUpdate. */
  private async finish(ctx: RequestContext, key: string, kv: KeyValue, next: KubeObject) {
    if (ctx.dryRun) return { object: next, deleted: true };
    const { revision } = await this.storage.delete(key, kv.modRevision).catch((e: unknown) => {
      throw fromStorageError(e, this.gr, next.metadata.name ?? '');
    });
    await this.definition.allocator?.release(next, this.storage);
    return { object: { ...next, metadata: { ...next.metadata, resourceVersion: String(revision) } }, deleted: true };
  }

  async delete(ctx: RequestContext, name: string, options: DeleteOptions): Promise<{ object: KubeObject; deleted: boolean }> {
    this.allow('delete');
    checkDeleteOptions(options);
    const key = this.key(ctx, name);
    for (let attempt = 0; attempt < MaxAttempts; attempt++) {
      const kv = await this.read(ctx, name);
      const old = decode(kv);
      deletePrecondition(this.gr, old, options);
      const refused = this.definition.deletion?.undeletable?.(old);
      if (refused) throw forbidden(this.gr, name, refused);
      const plan = planDelete(this.definition, old, options);
      if (plan.action === 'pending') return { object: old, deleted: false };
      if (ctx.dryRun) return plan.action === 'mark' ? { object: plan.next, deleted: false } : { object: old, deleted: true };
      try {
        if (plan.action === 'mark') {
          const bytes = encode(plan.next);
          return { object: withRevision(this.definition, plan.next, await this.storage.update(key, bytes, kv.modRevision), bytes), deleted: false };
        }
        await this.storage.delete(key, kv.modRevision);
        await this.definition.allocator?.release(old, this.storage);
        return { object: old, deleted: true };
      } catch (err) {
        if (!isStorageError(err, 'Conflict')) throw fromStorageError(err, this.gr, name);
      }
    }
    throw conflict(this.gr, name, OptimisticLockMessage);
  }

  async deleteCollection(ctx: RequestContext, query: ListQuery, options: DeleteOptions): Promise<KubeList> {
    this.allow('deletecollection');
    checkDeleteOptions(options);
    const { limit: _l, continue: _c, ...all } = query;
    const list = await this.list(ctx, all);
    const items: KubeObject[] = [];
    for (const obj of list.items) {
      const scoped = { ...ctx, namespace: obj.metadata.namespace };
      try {
        items.push((await this.delete(scoped, obj.metadata.name ?? '', options)).object);
      } catch (err) {
        // Gone since the list was read: someone else deleted it, which is what was asked.
        if (!(isApiError(err) && err.code === 404)) throw err;
      }
    }
    return { ...list, items };
  }

  async watch(ctx: RequestContext, query: WatchQuery, sink: WatchSink): Promise<{ close(): void }> {
    this.allow('watch');
    return watchObjects(this.deps.watch, this.definition, ctx, query, sink);
  }
}
