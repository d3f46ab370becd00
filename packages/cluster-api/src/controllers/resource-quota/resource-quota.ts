/**
 * The resource quota controller (pkg/controller/resourcequota): keeps each ResourceQuota's
 * `status.hard` (its spec's) and `status.used` (what the objects of its namespace that it selects
 * count, admission/resource-quota/usage.ts) current. Keyed by namespace. A namespace is counted again
 * when a quota is created or its spec changes, and when usage is given back — an object deleted, a
 * pod finished or being deleted (again when its grace has passed), a service or claim changed —
 * which it learns from a watch of each kind some quota tracks, started when first needed. Creates
 * need no recount: admission charged them already. Every namespace with quotas is recounted each
 * resync period too.
 *
 * The status is written with the resourceVersion it was read at: a charge made by admission in the
 * meantime makes the write fail, and the namespace is counted again.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import type { ResourceClient } from '../../client/interface.js';
import { quotaSelects } from '../../admission/resource-quota/scopes.js';
import { evaluatorFor, kindOf, podCounts, total, writeList } from '../../admission/resource-quota/usage.js';
import { obj, spec, status } from '../../registry/kinds/common.js';
import type { ControllerContext } from '../context.js';
import { startReconciler, type Result } from '../reconciler.js';
import { follow, inNamespace, type Controller } from '../shared.js';

/** kube-controller-manager's --resource-quota-sync-period default. */
const ResyncMs = 5 * 60_000;

/** Whether a quota's status no longer says what its spec asks (kube's updateQuota test). */
const needsCount = (q: KubeObject, old: KubeObject | undefined): boolean =>
  !old || !isDeepStrictEqual(obj(spec(q).hard), obj(status(q).hard)) || !isDeepStrictEqual(spec(q), spec(old));

/** Whether a change of an object can give usage back (its namespace is recounted then). */
const givesBack = (plural: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', o: KubeObject): boolean => {
  if (type === 'DELETED') return true;
  if (type !== 'MODIFIED') return false;
  if (plural === 'pods') return !podCounts(o, Date.now()) || !!o.metadata.deletionTimestamp;
  return plural === 'services' || plural === 'persistentvolumeclaims';
};

export const startResourceQuotaController = (ctx: ControllerContext): Controller => {
  const store = ctx.client.find('', 'v1', 'resourcequotas');
  if (!store) return { stop: async () => undefined };
  const quotas = ctx.caches.of(store);
  const watched = new Map<string, { close(): void }>();

  /** The client of a kind a quota counts, by its group and plural (any served version). */
  const clientOf = (group: string, plural: string): ResourceClient | undefined => {
    const def = ctx.client.definitions().find((d) => d.group === group && d.plural === plural && d.namespaced && !d.storedAs);
    return def && ctx.client.find(def.group, def.version, def.plural);
  };

  /** Follows a counted kind's changes, once. */
  const watch = (group: string, plural: string, client: ResourceClient): void => {
    const key = `${group}/${plural}`;
    if (watched.has(key)) return;
    watched.set(key, follow(client, reconciler, (type, o) => {
      if (givesBack(plural, type, o) && o.metadata.namespace) reconciler.enqueue(o.metadata.namespace);
    }, () => false));
  };

  const reconcile = async (namespace: string): Promise<Result> => {
    const inNs = quotas.list(namespace);
    if (inNs.length === 0) return {};
    const now = Date.now();
    const objects = new Map<string, KubeObject[]>();
    let due = ResyncMs;
    const objectsOf = async (group: string, plural: string): Promise<KubeObject[]> => {
      const key = `${group}/${plural}`;
      let list = objects.get(key);
      if (!list) {
        const client = clientOf(group, plural);
        if (!client) return [];
        watch(group, plural, client);
        list = (await client.list(inNamespace(namespace), {})).items;
        objects.set(key, list);
        // A pod being deleted counts until its grace has passed: count again then.
        if (plural === 'pods' && group === '') {
          for (const p of list) {
            const { deletionTimestamp, deletionGracePeriodSeconds } = p.metadata;
            if (!deletionTimestamp || !podCounts(p, now)) continue;
            const end = Date.parse(deletionTimestamp) + (deletionGracePeriodSeconds ?? 0) * 1000 + 1000;
            due = Math.max(0, Math.min(due, end - now));
          }
        }
      }
      return list;
    };
    for (const q of inNs) {
      const names = Object.keys(obj(spec(q).hard)).sort();
      const byKind = new Map<string, { group: string; plural: string; names: string[] }>();
      for (const n of names) {
        const kind = kindOf(n);
        if (!kind) continue;
        const key = `${kind.group}/${kind.plural}`;
        byKind.set(key, { ...kind, names: [...(byKind.get(key)?.names ?? []), n] });
      }
      const used = new Map();
      for (const { group, plural, names: counted } of byKind.values()) {
        const ev = evaluatorFor(group, plural);
        const selected = (await objectsOf(group, plural)).filter((o) => quotaSelects(q, group, plural, o));
        for (const [k, v] of total(counted, selected.map((o) => ev.usage(o, now)))) used.set(k, v);
      }
      const next = { ...status(q), hard: obj(spec(q).hard), used: writeList(used) };
      if (isDeepStrictEqual(status(q), next)) continue;
      try {
        const written = await store.update(inNamespace(namespace), q.metadata.name!, { ...q, status: next }, 'status');
        quotas.observe(written.object);
      } catch (err) {
        // Charged by admission (or changed) since it was read: count the namespace again.
        if (isApiError(err) && (err.code === 409 || err.code === 404)) return { requeueAfter: 10 };
        throw err;
      }
    }
    return { requeueAfter: due };
  };

  const reconciler = startReconciler('resourcequota-controller', reconcile, [
    { cache: quotas, keys: (q, old, type) => (type !== 'DELETED' && needsCount(q, old) && q.metadata.namespace ? [q.metadata.namespace] : []) },
  ]);
  return {
    stop: async () => {
      for (const w of watched.values()) w.close();
      await reconciler.stop();
    },
  };
};
