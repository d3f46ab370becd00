/**
 * ResourceQuota admission (plugin/pkg/admission/resourcequota), last in the chain: a write is
 * charged against every quota of its namespace that selects it (scopes.ts) and tracks something it
 * uses (usage.ts), refused with kube-apiserver's message when that would exceed `status.hard`, or
 * when a pod's containers do not name requests/limits the quota tracks ("must specify"), or when the
 * quota controller has not counted the namespace yet ("status unknown").
 *
 * The charge is written into the quota's `status.used` before the object is stored, with the quota's
 * resourceVersion as precondition, as kube-apiserver does: two writes can never both take the last
 * unit, whichever API server they reach (the loser re-reads and is checked again). Within this
 * process the writes of a namespace are also serialized, so they do not fight over the
 * resourceVersion. A dry run is checked and charges nothing. A charge whose object is then not stored
 * (a name taken) stays until the quota controller recounts the namespace, as upstream.
 */
import type { KubeObject } from '../../api/meta.js';
import { ApiError, forbidden, isApiError } from '../../api/errors.js';
import { status } from '../../registry/kinds/common.js';
import { listedNamespaceObjects, namespaceObjects } from '../lookup.js';
import type { AdmissionPlugin, AdmissionRequest } from '../plugin.js';
import { quotaSelects } from './scopes.js';
import { add, evaluatorFor, mask, nonZero, pretty, readList, subtractNonNegative, writeList, type Evaluator, type Usage } from './usage.js';

/** How often a charge is retried when another writer moved a quota first. */
const MaxAttempts = 10;

/** Pods are charged when created (their resources do not change); services and claims on updates too (type, size); other kinds by count, on create. */
const handlesOperation = (ev: Evaluator, req: AdmissionRequest): boolean =>
  req.operation === 'CREATE' || (req.operation === 'UPDATE' && req.group === '' && (ev.plural === 'services' || ev.plural === 'persistentvolumeclaims'));

interface Charge {
  quota: KubeObject;
  used: Usage;
}

/** checkRequest: the quotas to charge and their new usage; throws the Forbidden that refuses the write. */
const plan = (req: AdmissionRequest, ev: Evaluator, quotas: readonly KubeObject[], charged: ReadonlySet<string>): Charge[] => {
  const gr = { group: req.group, resource: req.resource };
  const interesting: KubeObject[] = [];
  for (const q of quotas) {
    const name = q.metadata.name ?? '';
    if (charged.has(name) || !quotaSelects(q, req.group, req.resource, req.object)) continue;
    const restricted = [...readList(status(q).hard).keys()].filter((r) => ev.tracks(r)).sort();
    if (restricted.length === 0) continue;
    const unmet = req.operation === 'CREATE' ? ev.constraints?.(req.object, restricted) : undefined;
    if (unmet) throw forbidden(gr, req.name, `failed quota: ${name}: ${unmet}`);
    const used = readList(status(q).used);
    if (restricted.some((r) => !used.has(r))) throw forbidden(gr, req.name, `status unknown for quota: ${name}, resources: ${restricted.join(',')}`);
    interesting.push(q);
  }
  if (interesting.length === 0) return [];
  const now = Date.now();
  let delta = ev.usage(req.object, now);
  if (req.oldObject?.metadata.resourceVersion) delta = subtractNonNegative(delta, ev.usage(req.oldObject, now));
  delta = nonZero(delta);
  if (delta.size === 0) return [];
  return interesting.flatMap((q) => {
    const hard = readList(status(q).hard);
    const used = readList(status(q).used);
    const requested = mask(delta, hard.keys());
    if (requested.size === 0) return [];
    const next = add(used, requested);
    const exceeded = [...requested.keys()].filter((k) => next.get(k)!.milli > hard.get(k)!.milli);
    if (exceeded.length > 0) {
      throw forbidden(gr, req.name, `exceeded quota: ${q.metadata.name ?? ''}, requested: ${pretty(mask(requested, exceeded))}, used: ${pretty(mask(used, exceeded))}, limited: ${pretty(mask(hard, exceeded))}`);
    }
    return [{ quota: q, used: next }];
  });
};

/** Runs `fn` after every earlier call for the same key has settled. */
const serialized = () => {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(fn);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => tails.get(key) === tail && tails.delete(key));
    return run;
  };
};
const inNamespace = serialized();

/** Writes the charges; answers the names written, stopping at the first quota another writer moved. */
const write = async (req: AdmissionRequest, charges: readonly Charge[], charged: Set<string>): Promise<boolean> => {
  const store = req.services.find('', 'v1', 'resourcequotas')!;
  for (const { quota, used } of charges) {
    try {
      await store.update({ namespace: req.namespace }, quota.metadata.name!, { ...quota, status: { ...status(quota), used: writeList(used) } }, 'status');
    } catch (err) {
      // Moved (409) or gone (404) since it was read: read the namespace's quotas again.
      if (isApiError(err) && (err.code === 409 || err.code === 404)) return false;
      throw err;
    }
    charged.add(quota.metadata.name!);
  }
  return true;
};

export const ResourceQuota: AdmissionPlugin = {
  name: 'ResourceQuota',
  handles: (req) => !req.subresource && !!req.namespace && (req.operation === 'CREATE' || req.operation === 'UPDATE'),
  async validate(req) {
    const ev = evaluatorFor(req.group, req.resource);
    if (!handlesOperation(ev, req)) return;
    // Most namespaces have no quota: the lister answers, without waiting for the namespace's other
    // writes; a charge below reads the quotas from the store.
    const quotas = await listedNamespaceObjects(req, '', 'v1', 'resourcequotas');
    if (quotas.length === 0) return;
    if (req.ctx.dryRun) return void plan(req, ev, quotas, new Set());
    await inNamespace(req.namespace!, async () => {
      const charged = new Set<string>();
      for (let attempt = 0; attempt < MaxAttempts; attempt++) {
        const charges = plan(req, ev, await namespaceObjects(req, '', 'v1', 'resourcequotas'), charged);
        if (charges.length === 0 || (await write(req, charges, charged))) return;
      }
      throw new ApiError(409, 'Conflict', `Operation cannot be fulfilled on resourcequotas: the quotas of namespace "${req.namespace}" kept changing; please try again`);
    });
  },
};
