/**
 * The generic store (Kubernetes' registry/generic/registry.Store): every kind's get, list, create,
 * update, patch, delete and watch over the byte-level Storage, and its subresources by behaviour
 * type. Per-kind behaviour comes only from the definition (strategy, subresource entries, hooks);
 * cross-kind rules from strategy.ts. Nothing here names a kind or a subresource.
 */
import type { DeleteOptions, KubeList, KubeObject } from '../../api/meta.js';
import {
  conflict, CustomResourcePatchTypes, forbidden, fromStorageError, isApiError, methodNotAllowed, notFound, OptimisticLockMessage, pathNotFound, unsupportedPatchType,
} from '../../api/errors.js';
import type { AdmissionChain } from '../../admission/chain.js';
import type { KeyValue, Storage } from '../../storage/interface.js';
import { resourceAttributes } from '../authorization.js';
import type { ResourceDefinition, Services, Verb } from '../definition.js';
import type { ListQuery, PatchType, RequestContext, ResourceStore, WatchQuery, WatchSink, Written } from '../rest.js';
import { subresourceOf, type ConnectHandler, type ConnectRequest, type ParentStore, type SubresourceBehaviour, type ViewBehaviour } from '../subresource.js';
import { checkDeleteOptions } from './deletion.js';
import { listEncoded, listObjects } from './list.js';
import { applyConfiguration } from './managed-fields.js';
import { Codec, type Siblings } from './codec.js';
import { clone, objectKey } from './meta.js';
import type { NamespaceLifecycle } from './namespace-lifecycle.js';
import { MaxAttempts, ObjectStorage, type Target } from './objects.js';
import { applyPatch, checkPatchShape } from './patch.js';
import { prepareCreate, prepareUpdate, revalidate } from './strategy.js';
import { objectView } from './views.js';
import { watchObjects, type WatchDeps } from './watch.js';

/** What a store needs from the rest of the registry. */
export interface StoreDeps {
  /** For namespaced creates: 404 when the namespace does not exist, 403 while it is being deleted. */
  namespaces: NamespaceLifecycle;
  /** The registry's one watch cache and bookmark timing. */
  watch: WatchDeps;
  /** What subresource behaviours, hooks and review answers may use. */
  services: Services;
  /** The other served versions of an object set, for bytes an earlier storage version wrote. */
  siblings?: Siblings;
  /** The admission plugins every create and update passes (admission/); absent: none. */
  admission?: AdmissionChain;
}

export class GenericStore implements ResourceStore {
  private readonly objects: ObjectStorage;
  private readonly codec: Codec;
  private readonly gr;
  /** Open watches, ended when the definition stops being served. */
  private readonly watches = new Set<{ close(): void; sink: WatchSink }>();
  constructor(
    readonly definition: ResourceDefinition,
    private readonly storage: Storage,
    private readonly deps: StoreDeps,
  ) {
    this.codec = new Codec(definition, deps.siblings);
    this.objects = new ObjectStorage(definition, storage, this.codec);
    this.gr = this.objects.gr;
  }

  /** Writes this server stored through this store (a lister compares it to know it has seen them). */
  get writes(): number {
    return this.objects.writes;
  }

  /** Routes derive from verbs too; the store refuses on its own so no caller can bypass the table. */
  private allow(verb: Verb): void {
    if (!this.definition.verbs.includes(verb)) throw methodNotAllowed(verb, this.gr);
  }

  /** The behaviour of a declared subresource (404 otherwise) that offers `verb` (405 otherwise). */
  private behaviour(name: string, verb?: Verb): SubresourceBehaviour {
    const sub = subresourceOf(this.definition, name);
    if (!sub) throw pathNotFound();
    if (verb && !sub.verbs.includes(verb)) throw methodNotAllowed(verb, this.gr);
    return sub.behaviour;
  }

  /** The object itself, or the view subresource a get / update / patch goes through. */
  private view(verb: Verb, subresource?: string): ViewBehaviour {
    if (subresource === undefined) return this.allow(verb), objectView;
    const behaviour = this.behaviour(subresource, verb);
    if (behaviour.type !== 'view') throw methodNotAllowed(verb, this.gr);
    return behaviour;
  }

  async get(ctx: RequestContext, name: string, subresource?: string): Promise<KubeObject> {
    const view = this.view('get', subresource);
    const object = this.codec.decode(await this.objects.read(ctx, name));
    return view.read ? view.read(object, this.definition) : object;
  }

  getEncoded(ctx: RequestContext, name: string): Uint8Array | Promise<Uint8Array> {
    this.allow('get');
    let now: KeyValue | null | undefined;
    try {
      now = this.storage.getNow?.(this.objects.key(ctx, name));
    } catch (err) {
      throw fromStorageError(err, this.gr, name);
    }
    if (now === null) throw notFound(this.gr, name);
    if (now) return Buffer.concat(this.codec.spliced(now));
    return this.objects.read(ctx, name).then((kv) => Buffer.concat(this.codec.spliced(kv)));
  }

  async list(ctx: RequestContext, query: ListQuery): Promise<KubeList> {
    this.allow('list');
    return listObjects(this.storage, this.codec, this.definition, ctx, query);
  }

  async listEncoded(ctx: RequestContext, query: ListQuery): Promise<Uint8Array> {
    this.allow('list');
    return listEncoded(this.storage, this.codec, this.definition, ctx, query);
  }

  async create(ctx: RequestContext, body: unknown): Promise<Written> {
    this.allow('create');
    const def = this.definition;
    const obj = prepareCreate(def, ctx, body);
    const { name = '', namespace } = obj.metadata;
    if (def.namespaced && namespace) await this.deps.namespaces.admitCreate(this.gr, namespace, name || obj.metadata.generateName || '');
    await this.admission(ctx, obj, undefined);
    await def.hooks?.admit?.(obj, undefined, ctx, this.deps.services);
    const undo = await def.allocator?.allocate(obj, this.storage);
    if (ctx.dryRun || def.ephemeral) {
      await undo?.();
      return { object: def.answer ? await def.answer(obj, this.deps.services, ctx) : obj };
    }
    let written: Written;
    try {
      const bytes = this.codec.encode(obj);
      written = this.objects.stored(obj, await this.storage.create(objectKey(def, namespace, name), bytes), bytes);
    } catch (err) {
      await undo?.();
      throw fromStorageError(err, this.gr, name);
    }
    const after = def.hooks?.afterCreate;
    return after ? ((await after(written, ctx, this.deps.services)) ?? written) : written;
  }

  /** PUT of the object or of a view: the body decoded by the view, merged into the stored object, under the view's rules. */
  async update(ctx: RequestContext, name: string, body: unknown, subresource?: string): Promise<Written> {
    const view = this.view('update', subresource);
    const { view: asked, resourceVersion } = view.decode(body, { name, namespace: ctx.namespace, def: this.definition, patched: false });
    // The body is merged afresh on every attempt of the loop: the merge and the update rules modify it.
    return this.writeView({ ctx, name, written: subresource }, view, resourceVersion || undefined, () => clone(asked));
  }

  async patch(ctx: RequestContext, name: string, type: PatchType, patch: unknown, subresource?: string): Promise<Written> {
    if (type === 'apply') return this.apply(ctx, name, patch, subresource);
    const view = this.view('patch', subresource);
    if (type === 'strategic' && this.definition.custom) throw unsupportedPatchType('application/strategic-merge-patch+json', CustomResourcePatchTypes);
    checkPatchShape(type, patch);
    const def = this.definition;
    return this.writeView({ ctx, name, written: subresource }, view, undefined, (old) => {
      const patched = applyPatch(type, view.read ? view.read(old, def) : old, patch, def);
      const { view: asked, resourceVersion } = view.decode(patched, { name, namespace: ctx.namespace, def, patched: true });
      // A resourceVersion in the patch is a precondition (kubectl apply/edit rely on it).
      if (resourceVersion && resourceVersion !== old.metadata.resourceVersion) throw conflict(this.gr, name, OptimisticLockMessage);
      return asked;
    });
  }

  private async writeView<V>(target: Target, view: ViewBehaviour<V>, precondition: string | undefined, ask: (old: KubeObject) => V): Promise<Written> {
    const def = this.definition;
    const strategy = view.strategy ?? def.strategy;
    const out = await this.objects.guaranteedUpdate(target, precondition, this.admitted(target.ctx, (old) => prepareUpdate(def, view.merge(ask(old), old, def), old, strategy), strategy, target.written));
    return view.read ? { object: view.read(out.object, def) } : out;
  }

  /** An update's next object, through the admission chain and the kind's `admit` hook. */
  private admitted(ctx: RequestContext, next: (old: KubeObject) => KubeObject, strategy = this.definition.strategy, subresource?: string): (old: KubeObject) => KubeObject | Promise<KubeObject> {
    const admit = this.definition.hooks?.admit;
    if (!admit && !this.deps.admission) return next;
    return async (old) => {
      const obj = next(old);
      await this.admission(ctx, obj, old, strategy, subresource);
      await admit?.(obj, old, ctx, this.deps.services);
      return obj;
    };
  }

  /** The admission chain on a create (`old` undefined) or an update; validated again when a plugin changed the object. */
  private async admission(ctx: RequestContext, obj: KubeObject, old: KubeObject | undefined, strategy = this.definition.strategy, subresource?: string): Promise<void> {
    const chain = this.deps.admission;
    if (!chain) return;
    const def = this.definition;
    const mutated = await chain.admit({
      operation: old ? 'UPDATE' : 'CREATE', group: def.group, version: def.version, resource: def.plural, subresource, kind: def.kind,
      namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', object: obj, oldObject: old, ctx, services: this.deps.services,
    });
    if (mutated) revalidate(def, obj, old, strategy);
  }

  /**
   * Server-side apply: the configuration merged into the object by field ownership (managed-fields.ts),
   * or the object created from it. A delete or create racing the apply is retried. Through a view of
   * another shape than the object (Scale) there is nothing to merge by field: 415, as kube-apiserver.
   */
  async apply(ctx: RequestContext, name: string, config: unknown, subresource?: string): Promise<Written> {
    const view = this.view('patch', subresource);
    if (view.read) throw unsupportedPatchType('application/apply-patch+yaml');
    checkPatchShape('apply', config);
    const def = this.definition;
    const { view: incoming, resourceVersion } = view.decode(config, { name, namespace: ctx.namespace, def, patched: false });
    const request = { manager: ctx.fieldManager ?? '', force: ctx.force ?? false, subresource };
    const strategy = view.strategy ?? def.strategy;
    for (let attempt = 0; attempt < MaxAttempts; attempt++) {
      try {
        return await this.objects.guaranteedUpdate({ ctx, name, written: 'applied' }, resourceVersion || undefined, this.admitted(ctx, (old) =>
          prepareUpdate(def, view.merge(applyConfiguration(def, old, incoming, request), old, def), old, strategy), strategy, subresource));
      } catch (err) {
        if (!isApiError(err) || err.code !== 404 || subresource) throw err;
      }
      try {
        return { ...(await this.create(ctx, applyConfiguration(def, undefined, incoming, request))), created: true };
      } catch (err) {
        if (!isApiError(err) || err.reason !== 'AlreadyExists') throw err;
      }
    }
    throw conflict(this.gr, name, OptimisticLockMessage);
  }

  /** POST on an action (binding) or create (token) subresource. */
  async post(ctx: RequestContext, name: string, subresource: string, body: unknown): Promise<Written> {
    const behaviour = this.behaviour(subresource, 'create');
    if (behaviour.type === 'create') {
      const checked = behaviour.check(body, name);
      return { object: await behaviour.create(checked, this.codec.decode(await this.objects.read(ctx, name)), ctx, this.deps.services) };
    }
    if (behaviour.type !== 'action') throw methodNotAllowed('create', this.gr);
    const checked = behaviour.check(body, name);
    return { object: await behaviour.act(checked, this.parent(ctx, name, subresource), ctx, this.deps.services) };
  }

  /** What an action may do to its object. */
  private parent(ctx: RequestContext, name: string, subresource: string): ParentStore {
    return {
      get: () => this.get(ctx, name),
      update: (next) => this.objects.guaranteedUpdate({ ctx, name, written: subresource }, undefined, next),
      delete: (options) => this.delete(ctx, name, options),
    };
  }

  async connect(ctx: RequestContext, name: string, request: ConnectRequest): Promise<ConnectHandler> {
    // The router has matched the method to the entry's verbs; here only the behaviour type is left to check.
    const behaviour = this.behaviour(request.subresource);
    if (behaviour.type !== 'connect') throw methodNotAllowed('get', this.gr);
    if (behaviour.requiresCreate && request.verb !== 'create') this.authorizeCreate(ctx, name, request.subresource);
    // pods/proxy names `web:8080`: the behaviour says which object that is (and refuses a malformed one).
    const objectName = behaviour.objectName?.(name) ?? name;
    return behaviour.connect(this.codec.decode(await this.objects.read(ctx, objectName)), request, this.deps.services);
  }

  /**
   * ensureAuthorizedForVerb (kube-apiserver's pod connect REST): the same request asked again with
   * `create`; refused with the authorizer's reason alone, as Kubernetes words it.
   */
  private authorizeCreate(ctx: RequestContext, name: string, subresource: string): void {
    const { authorizer } = this.deps.services;
    if (!ctx.user || !authorizer) return;
    const def = this.definition;
    const attrs = resourceAttributes(ctx.user, 'create', { apiGroup: def.group, apiVersion: def.version, resource: def.plural, subresource, namespace: ctx.namespace ?? '', name });
    const found = authorizer.authorize(attrs);
    if (found.decision !== 'Allow') throw forbidden(this.gr, name, found.reason);
  }

  async delete(ctx: RequestContext, name: string, options: DeleteOptions): Promise<Written> {
    this.allow('delete');
    return this.objects.delete(ctx, name, options);
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
    const handle = await watchObjects(this.deps.watch, this.codec, this.definition, ctx, query, sink);
    const entry = { sink, close: () => (this.watches.delete(entry), handle.close()) };
    this.watches.add(entry);
    return { close: entry.close };
  }

  endWatches(): void {
    for (const w of [...this.watches]) {
      w.close();
      w.sink.onEnd?.();
    }
  }
}
