/**
 * Deletes objects of one resource when a deadline read from each passes: the pod reaper (end of a
 * grace period), the Event TTL (an hour after the last occurrence) and the TTL-after-finished
 * controller. A reconciler keyed by object: the watch records each object's deadline, the key runs
 * again when it is due (`requeueAfter`); an object rewritten with another deadline is due at that
 * one, a deleted one not at all. A failed delete is retried with the queue's back-off.
 */
import type { DeleteOptions, KubeObject } from '../api/meta.js';
import type { ResourceClient } from '../client/interface.js';
import { objectKey, splitKey } from './context.js';
import { ignoreRaces, inNamespace, type Controller, type ControllerOptions } from './shared.js';
import { startReconciler } from './reconciler.js';

export interface Deadlines {
  name: string;
  /** When `obj` is to be deleted (ms since the epoch), or undefined while it is not. */
  dueAt(obj: KubeObject): number | undefined;
  /** Whether an object past its deadline is someone else's to delete after all (checked when due). */
  keep?(obj: KubeObject): Promise<boolean>;
  /** How it is deleted (a uid precondition is added: a newer object of the same name is not touched). */
  deleteOptions?: DeleteOptions;
  /** Which creations can have a deadline at all (see WatchSink.admitCreated). */
  admitCreated?: (stored: Uint8Array) => boolean;
}

interface Due {
  at: number;
  obj: KubeObject;
}

export const deleteWhenDue = (store: ResourceClient, d: Deadlines, opts: ControllerOptions = {}): Controller => {
  const due = new Map<string, Due>();

  const reconcile = async (key: string) => {
    const x = due.get(key);
    if (!x) return;
    const left = x.at - Date.now();
    if (left > 0) return { requeueAfter: left };
    if (!(await d.keep?.(x.obj))) {
      const { namespace, name } = splitKey(key);
      await store.delete(inNamespace(namespace || undefined), name, { ...d.deleteOptions, preconditions: { uid: x.obj.metadata.uid } }).catch(ignoreRaces);
    }
    if (due.get(key) === x) due.delete(key);
  };

  const keys = (obj: KubeObject, _old: unknown, type: string): string[] => {
    const key = objectKey(obj);
    const at = type === 'DELETED' ? undefined : d.dueAt(obj);
    if (at === undefined) return (due.delete(key), []);
    due.set(key, { at, obj });
    return [key];
  };
  return startReconciler(d.name, reconcile, [{ watch: store, keys, admitCreated: d.admitCreated }], { log: opts.log });
};
