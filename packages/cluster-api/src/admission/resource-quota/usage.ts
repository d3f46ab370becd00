/**
 * What an object counts against a ResourceQuota (pkg/quota/v1/evaluator/core): one evaluator per
 * kind — pods (object count and compute requests/limits, while not terminal), services (count, load
 * balancers, node ports), persistent volume claims (count and storage, also per storage class), and
 * every other namespaced kind by object count (`count/<resource>.<group>`, and the legacy names
 * `secrets`, `configmaps`, …). Which objects a quota counts (its scopes) is scopes.ts. Shared by the
 * admission plugin (charging a write) and the quota controller (recounting a namespace).
 */
import type { KubeObject } from '../../api/meta.js';
import { formatAmount, parseAmount, type Amount } from '../../api/quantity.js';
import { arr, obj, spec, status, str } from '../../registry/kinds/common.js';
import { podTotals } from '../limit-ranger/constraints.js';

/** A quota's resource names to amounts (a ResourceList). */
export type Usage = Map<string, Amount>;

export interface Evaluator {
  group: string;
  plural: string;
  /** Whether a quota's resource name (`pods`, `requests.cpu`, `count/jobs.batch`) is counted by this kind. */
  tracks(resource: string): boolean;
  /** What one object counts, at `now` (ms). */
  usage(o: KubeObject, now: number): Usage;
  /** Resources each container must name when a quota tracks them (pods only): the "must specify" rule. */
  constraints?(o: KubeObject, required: readonly string[]): string | undefined;
}

const one: Amount = { milli: 1000n, binary: false };
const count = (n: number): Amount => ({ milli: BigInt(n) * 1000n, binary: false });

/** `count/pods`, `count/jobs.batch`. */
export const countName = (group: string, plural: string): string => `count/${plural}${group ? `.${group}` : ''}`;

/** The names object counts had before `count/…`, still tracked. */
const LegacyCounts: Record<string, string> = {
  pods: 'pods', services: 'services', secrets: 'secrets', configmaps: 'configmaps',
  persistentvolumeclaims: 'persistentvolumeclaims', replicationcontrollers: 'replicationcontrollers', resourcequotas: 'resourcequotas',
};

const objectCount = (group: string, plural: string): Evaluator => {
  const names = new Set([countName(group, plural), ...(group === '' && LegacyCounts[plural] && plural !== 'pods' ? [LegacyCounts[plural]] : [])]);
  return { group, plural, tracks: (r) => names.has(r), usage: () => new Map([...names].map((n) => [n, one])) };
};

// ——— pods ———

const ComputeNames = new Set(['pods', 'cpu', 'memory', 'ephemeral-storage', 'requests.cpu', 'requests.memory', 'requests.ephemeral-storage', 'limits.cpu', 'limits.memory', 'limits.ephemeral-storage']);
const isHugePages = (r: string) => r.startsWith('hugepages-');
/** An extended resource (`example.com/gpu`): a domain-qualified name outside kubernetes.io. */
const isExtended = (r: string) => r.includes('/') && !r.startsWith('kubernetes.io/') && !r.startsWith('requests.') && !r.startsWith('limits.');

/** The resources whose requests each container must name when a quota tracks them (backward compatibility). */
const ValidationSet = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

/** QuotaV1Pod: a pod counts until it is Succeeded or Failed, or its deletion is past its grace period. */
export const podCounts = (pod: KubeObject, now: number): boolean => {
  const phase = str(status(pod).phase);
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata;
  if (deletionTimestamp && typeof deletionGracePeriodSeconds === 'number') {
    const at = Date.parse(deletionTimestamp);
    if (!Number.isNaN(at) && now > at + deletionGracePeriodSeconds * 1000) return false;
  }
  return true;
};

/** podComputeUsageHelper: a pod's (or a container's) requests and limits as quota resource names. */
const computeUsage = (requests: Record<string, unknown>, limits: Record<string, unknown>): Usage => {
  const u: Usage = new Map([['pods', one]]);
  const put = (name: string, v: unknown) => {
    const a = parseAmount(v);
    if (a) u.set(name, a);
  };
  for (const [k, v] of Object.entries(requests)) {
    if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage') put(k, v), put(`requests.${k}`, v);
    else if (isHugePages(k)) put(`requests.${k}`, v);
    else if (isExtended(k)) put(`requests.${k}`, v);
  }
  for (const [k, v] of Object.entries(limits)) if (k === 'cpu' || k === 'memory' || k === 'ephemeral-storage' || isHugePages(k)) put(`limits.${k}`, v);
  return u;
};

const pods: Evaluator = {
  group: '',
  plural: 'pods',
  tracks: (r) => ComputeNames.has(r) || r === 'count/pods' || r.startsWith('requests.hugepages-') || r.startsWith('limits.hugepages-') || (r.startsWith('requests.') && r.includes('/')),
  usage(pod, now) {
    const u: Usage = new Map([['count/pods', one]]);
    if (!podCounts(pod, now)) return u;
    const { requests, limits } = podTotals(spec(pod));
    for (const [k, a] of computeUsage(requests, limits)) u.set(k, a);
    return u;
  },
  constraints(pod, required) {
    const wanted = required.filter((r) => ValidationSet.has(r));
    if (wanted.length === 0) return undefined;
    const missing = new Map<string, Set<string>>();
    for (const c of [...arr(spec(pod).containers), ...arr(spec(pod).initContainers)].map(obj)) {
      const resources = obj(c.resources);
      const has = computeUsage(obj(resources.requests), obj(resources.limits));
      for (const r of wanted) if (!has.has(r)) missing.set(r, (missing.get(r) ?? new Set()).add(str(c.name)));
    }
    if (missing.size === 0) return undefined;
    const byName = [...missing.keys()].sort();
    return `must specify ${byName.map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`).join('; ')}`;
  },
};

// ——— services ———

const services: Evaluator = {
  group: '',
  plural: 'services',
  tracks: (r) => r === 'services' || r === 'count/services' || r === 'services.loadbalancers' || r === 'services.nodeports',
  usage(svc) {
    const type = str(spec(svc).type) || 'ClusterIP';
    const ports = arr(spec(svc).ports).length;
    const nodePorts = type === 'NodePort' || (type === 'LoadBalancer' && spec(svc).allocateLoadBalancerNodePorts !== false) ? ports : 0;
    return new Map([['services', one], ['count/services', one], ['services.loadbalancers', count(type === 'LoadBalancer' ? 1 : 0)], ['services.nodeports', count(nodePorts)]]);
  },
};

// ——— persistent volume claims ———

const StorageClassSuffix = '.storageclass.storage.k8s.io/';

const claims: Evaluator = {
  group: '',
  plural: 'persistentvolumeclaims',
  tracks: (r) => r === 'persistentvolumeclaims' || r === 'count/persistentvolumeclaims' || r === 'requests.storage' || (r.includes(StorageClassSuffix) && /\/(requests\.storage|persistentvolumeclaims)$/.test(r)),
  usage(pvc) {
    const u: Usage = new Map([['persistentvolumeclaims', one], ['count/persistentvolumeclaims', one]]);
    const className = str(spec(pvc).storageClassName) || str(pvc.metadata.annotations?.['volume.beta.kubernetes.io/storage-class']);
    if (className) u.set(`${className}${StorageClassSuffix}persistentvolumeclaims`, one);
    const storage = parseAmount(obj(obj(spec(pvc).resources).requests).storage);
    if (storage) {
      u.set('requests.storage', storage);
      if (className) u.set(`${className}${StorageClassSuffix}requests.storage`, storage);
    }
    return u;
  },
};

const Specific = [pods, services, claims];

/** The evaluator of a kind: its own, else object count. */
export const evaluatorFor = (group: string, plural: string): Evaluator => {
  const own = Specific.find((e) => e.group === group && e.plural === plural);
  if (!own) return objectCount(group, plural);
  // Object count by `count/…` comes with every kind.
  const generic = objectCount(group, plural);
  return { ...own, tracks: (r) => own.tracks(r) || generic.tracks(r) };
};

/** Which kind (group, plural) counts a quota resource name; undefined for names no kind here counts. */
export const kindOf = (resource: string): { group: string; plural: string } | undefined => {
  if (resource.startsWith('count/')) {
    const name = resource.slice('count/'.length);
    const dot = name.indexOf('.');
    return dot < 0 ? { group: '', plural: name } : { group: name.slice(dot + 1), plural: name.slice(0, dot) };
  }
  const own = Specific.find((e) => e.tracks(resource));
  if (own) return own;
  const legacy = LegacyCounts[resource];
  return legacy ? { group: '', plural: legacy } : undefined;
};

// ——— resource lists ———

const zero = (binary = false): Amount => ({ milli: 0n, binary });

export const add = (a: Usage, b: Usage): Usage => {
  const out = new Map(a);
  for (const [k, v] of b) {
    const now = out.get(k);
    out.set(k, now ? { milli: now.milli + v.milli, binary: now.milli === 0n ? v.binary : now.binary } : v);
  }
  return out;
};

/** a − b per resource, never below zero (an update's charge is only what it adds). */
export const subtractNonNegative = (a: Usage, b: Usage): Usage =>
  new Map([...a].map(([k, v]) => [k, { ...v, milli: v.milli - (b.get(k)?.milli ?? 0n) > 0n ? v.milli - (b.get(k)?.milli ?? 0n) : 0n }]));

export const mask = (u: Usage, names: Iterable<string>): Usage => {
  const keep = new Set(names);
  return new Map([...u].filter(([k]) => keep.has(k)));
};

export const nonZero = (u: Usage): Usage => new Map([...u].filter(([, v]) => v.milli !== 0n));

/** A ResourceList read from an object; values that do not parse are left out. */
export const readList = (list: unknown): Usage =>
  new Map(Object.entries(obj(list)).flatMap(([k, v]) => {
    const a = parseAmount(v);
    return a ? [[k, a] as const] : [];
  }));

export const writeList = (u: Usage): Record<string, string> =>
  Object.fromEntries([...u].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, formatAmount(v)]));

/** `pods=1,requests.cpu=500m`: sorted by name, as kube-apiserver prints a ResourceList in its messages. */
export const pretty = (u: Usage): string => Object.entries(writeList(u)).map(([k, v]) => `${k}=${v}`).join(',');

/** Totals of `names` over objects (each of `zero` first, so every name is present). */
export const total = (names: readonly string[], usages: Iterable<Usage>): Usage => {
  let sum: Usage = new Map(names.map((n) => [n, zero()]));
  for (const u of usages) sum = add(sum, mask(u, names));
  return sum;
};
