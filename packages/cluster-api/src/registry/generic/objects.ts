/**
 * One object's storage, under the generic store: its key, reads, and the two read-modify-write loops
 * every write goes through — the guaranteed update (compare-and-swap on modRevision, retried on
 * conflict unless the client pinned a resourceVersion, no write when the bytes are unchanged) and
 * delete (preconditions, grace, finalizers).
 */
import type { DeleteOptions, KubeObject } from '../../api/meta.js';
import { badRequest, conflict, forbidden, fromStorageError, notFound, OptimisticLockMessage, type GroupResource } from '../../api/errors.js';
import { isStorageError } from '../../storage/errors.js';
import type { KeyValue, Storage } from '../../storage/interface.js';
import type { ResourceDefinition } from '../definition.js';
import type { RequestContext, Written } from '../rest.js';
import { checkDeleteOptions, deletePrecondition, planDelete, releasedByUpdate } from './deletion.js';
import { recordUpdate } from './managed-fields.js';
import type { Codec } from './codec.js';
import { groupResource, objectKey, sameBytes } from './meta.js';

/** The manager of writes made inside the server (controllers), which name none. */
const InternalManager = 'cluster-api';

/** Conflicts retried before giving up when the client sent no resourceVersion. */
export const MaxAttempts = 16;

/** An update's target: the object, and the subresource written through (for managedFields; 'applied' when an apply recorded them itself). */
export interface Target {
  ctx: RequestContext;
  name: string;
  written?: string | 'applied';
}

export class ObjectStorage {
  readonly gr: GroupResource;

  constructor(
    private readonly definition: ResourceDefinition,
    readonly storage: Storage,
    /** Stored bytes ↔ the objects this definition's group version answers. */
    readonly codec: Codec,
  ) {
    this.gr = groupResource(definition);
  }

  key(ctx: RequestContext, name: string): string {
    if (this.definition.namespaced && !ctx.namespace) throw badRequest('a namespace is required for a namespaced resource');
    try {
      return objectKey(this.definition, ctx.namespace, name);
    } catch {
      // No object can have a name that is not a key segment: as Kubernetes would, say it is not there.
      throw notFound(this.gr, name);
    }
  }

  async read(ctx: RequestContext, name: string): Promise<KeyValue> {
    const kv = await this.storage.get(this.key(ctx, name)).catch((e: unknown) => { throw fromStorageError(e, this.gr, name); });
    if (!kv) throw notFound(this.gr, name);
    return kv;
  }

  /** The object just stored, as a read would return it, without parsing the bytes back (`bytes`: the storage may not echo them). */
  /** Writes stored through this object set by this server (creates, updates, deletes), counted as they commit. */
  writes = 0;

  stored(obj: KubeObject, kv: KeyValue, bytes: Uint8Array): Written {
    this.writes++;
    obj.metadata.resourceVersion = String(kv.modRevision);
    return { object: obj, encoded: () => Buffer.concat(this.codec.spliced({ ...kv, value: bytes })) };
  }

  /**
   * Read, apply, compare-and-swap on modRevision; on a conflict re-read and re-apply, unless the
   * client pinned a resourceVersion (then the conflict is theirs: 409). Unchanged bytes are not written.
   */
  async guaranteedUpdate({ ctx, name, written }: Target, precondition: string | undefined, next: (old: KubeObject) => KubeObject | Promise<KubeObject>): Promise<Written> {
    const key = this.key(ctx, name);
    for (let attempt = 0; attempt < MaxAttempts; attempt++) {
      const kv = await this.read(ctx, name);
      const old = this.codec.decode(kv);
      if (precondition !== undefined && precondition !== old.metadata.resourceVersion) throw conflict(this.gr, name, OptimisticLockMessage);
      const made = next(old);
      const obj = made instanceof Promise ? await made : made;
      if (written !== 'applied') recordUpdate(this.definition, old, obj, ctx.fieldManager ?? InternalManager, written);
      if (releasedByUpdate(this.definition, obj, old)) return this.finish(ctx, key, kv, obj);
      const held = await this.definition.allocator?.reallocate?.(obj, old, this.storage);
      const bytes = this.codec.encode(obj);
      if (sameBytes(bytes, kv.value) || ctx.dryRun) {
        await held?.undo();
        if (ctx.dryRun) return { object: { ...obj, metadata: { ...obj.metadata, resourceVersion: old.metadata.resourceVersion } } };
        return { object: old };
      }
      try {
        const out = this.stored(obj, await this.storage.update(key, bytes, kv.modRevision), bytes);
        await held?.commit();
        return out;
      } catch (err) {
        await held?.undo();
        if (!isStorageError(err, 'Conflict')) throw fromStorageError(err, this.gr, name);
      }
    }
    throw conflict(this.gr, name, OptimisticLockMessage);
  }

  /** The last finalizer of a deleting object is gone: remove it, as Kubernetes' ShouldDeleteDuringUpdate. */
  private async finish(ctx: RequestContext, key: string, kv: KeyValue, obj: KubeObject): Promise<Written> {
    if (ctx.dryRun) return { object: obj, deleted: true };
    const { revision } = await this.storage.delete(key, kv.modRevision).catch((e: unknown) => {
      throw fromStorageError(e, this.gr, obj.metadata.name ?? '');
    });
    this.writes++;
    await this.definition.allocator?.release(obj, this.storage);
    return { object: { ...obj, metadata: { ...obj.metadata, resourceVersion: String(revision) } }, deleted: true };
  }

  async delete(ctx: RequestContext, name: string, options: DeleteOptions): Promise<Written> {
    checkDeleteOptions(options);
    const key = this.key(ctx, name);
    for (let attempt = 0; attempt < MaxAttempts; attempt++) {
      const kv = await this.read(ctx, name);
      const old = this.codec.decode(kv);
      deletePrecondition(this.gr, old, options);
      const refused = this.definition.deletion?.undeletable?.(old, ctx);
      if (refused) throw forbidden(this.gr, name, refused);
      const plan = planDelete(this.definition, old, options);
      if (plan.action === 'pending') return { object: old, deleted: false };
      if (ctx.dryRun) return plan.action === 'mark' ? { object: plan.next, deleted: false } : { object: old, deleted: true };
      try {
        if (plan.action === 'mark') {
          const bytes = this.codec.encode(plan.next);
          return { ...this.stored(plan.next, await this.storage.update(key, bytes, kv.modRevision), bytes), deleted: false };
        }
        await this.storage.delete(key, kv.modRevision);
        this.writes++;
        await this.definition.allocator?.release(old, this.storage);
        return { object: old, deleted: true };
      } catch (err) {
        if (!isStorageError(err, 'Conflict')) throw fromStorageError(err, this.gr, name);
      }
    }
    throw conflict(this.gr, name, OptimisticLockMessage);
  }
}
