/**
 * The constraints of a LimitRange item on one resource (limitranger's minConstraint, maxConstraint,
 * maxRequestConstraint, limitRequestRatioConstraint), each answering its broken rule as
 * kube-apiserver words it, and a pod's totals for `Pod` items. Values compare exactly (thousandths);
 * a value that does not parse is refused by the kinds' validation before admission, and counts as
 * absent here.
 */
import { formatAmount, parseAmount, type Amount } from '../../api/quantity.js';
import { arr, obj, type Obj } from '../../registry/kinds/common.js';

export type Resources = Obj;

const amount = (list: Resources, k: string): Amount | undefined => (k in list ? parseAmount(list[k]) : undefined);
const text = (a: Amount | undefined): string => (a ? formatAmount(a) : '0');

export const minConstraint = (type: string, k: string, enforcedRaw: unknown, requests: Resources, limits: Resources): string[] => {
  const enforced = parseAmount(enforcedRaw);
  if (!enforced) return [];
  const req = amount(requests, k);
  const lim = amount(limits, k);
  if (!req) return [`minimum ${k} usage per ${type} is ${text(enforced)}.  No request is specified`];
  if (req.milli < enforced.milli) return [`minimum ${k} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`];
  if (lim && lim.milli < enforced.milli) return [`minimum ${k} usage per ${type} is ${text(enforced)}, but limit is ${text(lim)}`];
  return [];
};

export const maxConstraint = (type: string, k: string, enforcedRaw: unknown, requests: Resources, limits: Resources): string[] => {
  const enforced = parseAmount(enforcedRaw);
  if (!enforced) return [];
  const req = amount(requests, k);
  const lim = amount(limits, k);
  if (!lim) return [`maximum ${k} usage per ${type} is ${text(enforced)}.  No limit is specified`];
  if (lim.milli > enforced.milli) return [`maximum ${k} usage per ${type} is ${text(enforced)}, but limit is ${text(lim)}`];
  if (req && req.milli > enforced.milli) return [`maximum ${k} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`];
  return [];
};

/** A claim's max is held against what it requests (its limits are not the user's to give). */
export const maxRequestConstraint = (type: string, k: string, enforcedRaw: unknown, requests: Resources): string[] => {
  const enforced = parseAmount(enforcedRaw);
  if (!enforced) return [];
  const req = amount(requests, k);
  if (!req) return [`maximum ${k} usage per ${type} is ${text(enforced)}.  No request is specified`];
  if (req.milli > enforced.milli) return [`maximum ${k} usage per ${type} is ${text(enforced)}, but request is ${text(req)}`];
  return [];
};

export const ratioConstraint = (type: string, k: string, enforcedRaw: unknown, requests: Resources, limits: Resources): string[] => {
  const enforced = parseAmount(enforcedRaw);
  if (!enforced) return [];
  const req = amount(requests, k);
  const lim = amount(limits, k);
  const head = `${k} max limit to request ratio per ${type} is ${text(enforced)}`;
  if (!req || req.milli === 0n) return [`${head}, but no request is specified or request is 0`];
  if (!lim || lim.milli === 0n) return [`${head}, but no limit is specified or limit is 0`];
  const ratio = Number(lim.milli) / Number(req.milli);
  // Go's %f: six decimals.
  return lim.milli * 1000n > enforced.milli * req.milli ? [`${head}, but provided ratio is ${ratio.toFixed(6)}`] : [];
};

/** The pod's containers and init containers, as their records. */
export const containersOf = (podSpec: Obj): Obj[] => [...arr(podSpec.containers), ...arr(podSpec.initContainers)].map(obj);

const add = (a: Amount | undefined, b: Amount): Amount => (a ? { milli: a.milli + b.milli, binary: a.milli === 0n ? b.binary : a.binary } : b);

/**
 * A pod's requests and limits (resourcehelper.PodRequests / PodLimits): the sum over its containers,
 * raised to any init container's own value that is larger, plus its overhead; only resources some
 * container names.
 */
export const podTotals = (podSpec: Obj): { requests: Resources; limits: Resources } => {
  const total = (field: 'requests' | 'limits'): Resources => {
    const sum = new Map<string, Amount>();
    for (const c of arr(podSpec.containers).map(obj)) {
      for (const [k, v] of Object.entries(obj(obj(c.resources)[field]))) {
        const a = parseAmount(v);
        if (a) sum.set(k, add(sum.get(k), a));
      }
    }
    for (const c of arr(podSpec.initContainers).map(obj)) {
      for (const [k, v] of Object.entries(obj(obj(c.resources)[field]))) {
        const a = parseAmount(v);
        const now = sum.get(k);
        if (a && (!now || a.milli > now.milli)) sum.set(k, a);
      }
    }
    for (const [k, v] of Object.entries(obj(podSpec.overhead))) {
      const a = parseAmount(v);
      if (a && sum.has(k)) sum.set(k, add(sum.get(k), a));
    }
    return Object.fromEntries([...sum].map(([k, a]) => [k, formatAmount(a)]));
  };
  return { requests: total('requests'), limits: total('limits') };
};
