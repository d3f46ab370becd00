/**
 * Deletes objects of one store when a deadline read from each passes: the pod reaper (end of a
 * grace period) and the Event TTL (an hour after the last occurrence). One timer, set for the
 * earliest deadline; an object rewritten with another deadline is due at that one, a deleted one not at all.
 */
import type { DeleteOptions, KubeObject } from '../api/meta.js';
import type { ResourceClient } from '../client/interface.js';
import { follow, ignoreRaces, inNamespace, Loop, type Controller, type ControllerOptions } from './loop.js';

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
  resyncMs: number;
}

interface Due {
  namespace: string;
  name: string;
  uid: string;
  at: number;
  obj: KubeObject;
}

export const deleteWhenDue = (store: ResourceClient, d: Deadlines, opts: ControllerOptions = {}): Controller => {
  const due = new Map<string, Due>();

  const pass = async (): Promise<void> => {
    const now = Date.now();
    for (const [key, x] of [...due]) {
      if (x.at > now) continue;
      due.delete(key);
      if (await d.keep?.(x.obj)) continue;
      await store.delete(inNamespace(x.namespace), x.name, { ...d.deleteOptions, preconditions: { uid: x.uid } }).catch(ignoreRaces);
    }
    const next = Math.min(...[...due.values()].map((x) => x.at));
    if (Number.isFinite(next)) loop.kick(Math.max(0, next - Date.now()));
  };

  const loop = new Loop(d.name, pass, { resyncMs: d.resyncMs, ...opts });
  const watch = follow(store, loop, (type, obj) => {
    const { namespace = '', name = '', uid = '' } = obj.metadata;
    const key = `${namespace}/${name}`;
    const at = type === 'DELETED' ? undefined : d.dueAt(obj);
    if (at === undefined) return void due.delete(key);
    due.set(key, { namespace, name, uid, at, obj });
    loop.kick(0);
  }, d.admitCreated);
  return {
    stop: async () => {
      watch.close();
      await loop.stop();
    },
  };
};
