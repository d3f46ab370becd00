/**
 * metrics.k8s.io/v1beta1, built into the API server (announced by its Local APIService as every
 * built-in group is): NodeMetrics (`nodes`) and PodMetrics (`pods`), get and list, as
 * metrics-server serves them: the CPU rate over the window between the last two scrapes of the
 * nodes' agents and the memory working set at the last (src/metrics/scraper.ts), CPU in nanocores
 * and memory in bytes as Quantities; a pod's or node's labels are its own (label selectors select
 * on them). An object whose usage is not known yet (fewer than two scrapes, a node not reached, a
 * pod gone) is not listed, and its get is NotFound.
 */
import type { KubeObject } from '../../api/meta.js';
import { formatAmount, parseQuantity } from '../../api/quantity.js';
import type { ResourceDefinition, Services } from '../definition.js';
import { groupVersion } from '../definition.js';
import { timestamp } from '../generic/meta.js';
import type { RequestContext } from '../rest.js';
import { computedStore } from './component-store.js';
import { column, inGroup, obj } from './common.js';

const Context: RequestContext = { user: { name: 'system:apiserver', uid: '', groups: ['system:masters'] } };

/** Nanocores as resource.NewScaledQuantity(n, -9) prints them: `1234567n`, `5m`, `2`. */
export const cpuQuantity = (nanoCores: number): string => {
  let v = BigInt(Math.max(0, Math.round(nanoCores)));
  if (v === 0n) return '0';
  for (const suffix of ['n', 'u', 'm']) {
    if (v % 1000n !== 0n) return `${v}${suffix}`;
    v /= 1000n;
  }
  return String(v);
};

/** Bytes as resource.NewQuantity(n, BinarySI) prints them: `1536Ki`, `1234567`. */
export const memoryQuantity = (bytes: number): string => formatAmount({ milli: BigInt(Math.max(0, Math.round(bytes))) * 1000n, binary: true });

/** A window as Go's time.Duration prints it (`15s`, `1.5s`, `1m0.25s`, `800ms`). */
export const goDuration = (ms: number): string => {
  if (ms < 1000) return `${ms}ms`;
  const trim = (s: number) => String(Number(s.toFixed(9)));
  const minutes = Math.floor(ms / 60_000);
  return minutes ? `${minutes}m${trim((ms % 60_000) / 1000)}s` : `${trim(ms / 1000)}s`;
};

const stored = async (services: Services, plural: string): Promise<Map<string, KubeObject>> => {
  const items = (await services.find('', 'v1', plural)?.list(Context, {}))?.items ?? [];
  return new Map(items.map((o) => [`${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`, o]));
};

const meta = (def: ResourceDefinition, of: KubeObject) => ({
  name: of.metadata.name,
  ...(def.namespaced && { namespace: of.metadata.namespace }),
  creationTimestamp: timestamp(),
  ...(of.metadata.labels && { labels: of.metadata.labels }),
});

const nodeMetricsStore = (def: ResourceDefinition, services: Services) =>
  computedStore(def, async () => {
    const source = services.resourceMetrics;
    if (!source) return [];
    const [points, nodes] = await Promise.all([source.nodes(), stored(services, 'nodes')]);
    return points.flatMap((p) => {
      const node = nodes.get(`/${p.name}`);
      return node ? [{ kind: def.kind, apiVersion: groupVersion(def), metadata: meta(def, node), timestamp: timestamp(new Date(p.timestamp)), window: goDuration(p.windowMs), usage: { cpu: cpuQuantity(p.cpuNanoCores), memory: memoryQuantity(p.memoryBytes) } }] : [];
    });
  });

const podMetricsStore = (def: ResourceDefinition, services: Services) =>
  computedStore(def, async () => {
    const source = services.resourceMetrics;
    if (!source) return [];
    const [points, pods] = await Promise.all([source.pods(), stored(services, 'pods')]);
    return points.flatMap((p) => {
      const pod = pods.get(`${p.namespace}/${p.name}`);
      if (!pod || pod.metadata.deletionTimestamp) return [];
      return [{
        kind: def.kind, apiVersion: groupVersion(def), metadata: meta(def, pod), timestamp: timestamp(new Date(p.timestamp)), window: goDuration(p.windowMs),
        containers: p.containers.map((c) => ({ name: c.name, usage: { cpu: cpuQuantity(c.cpuNanoCores), memory: memoryQuantity(c.memoryBytes) } })),
      }];
    });
  });

/** metrics-server's table: the name, the usage of each resource (a pod's summed over its containers), the window; no age. */
const usageOf = (o: KubeObject): { cpu: string; memory: string } => {
  const containers = (o as { containers?: unknown[] }).containers;
  const usages = (containers ? containers.map((c) => obj(obj(c).usage)) : [obj((o as { usage?: unknown }).usage)]);
  const sum = (k: string) => usages.reduce((a, u) => a + (parseQuantity(u[k]) ?? 0), 0);
  return { cpu: cpuQuantity(sum('cpu') * 1e9), memory: memoryQuantity(sum('memory')) };
};

const columns = [
  column('cpu', (o) => usageOf(o).cpu, { format: 'quantity' }),
  column('memory', (o) => usageOf(o).memory, { format: 'quantity' }),
  column('Window', (o) => String((o as { window?: unknown }).window ?? ''), { format: 'duration' }),
];

export const nodeMetrics = inGroup('metrics.k8s.io', 'v1beta1')({
  kind: 'NodeMetrics',
  plural: 'nodes',
  singular: '',
  namespaced: false,
  verbs: ['get', 'list'],
  strategy: {},
  store: nodeMetricsStore,
  columnLayout: 'declared',
  columns,
});

export const podMetrics = inGroup('metrics.k8s.io', 'v1beta1')({
  kind: 'PodMetrics',
  plural: 'pods',
  singular: '',
  namespaced: true,
  verbs: ['get', 'list'],
  strategy: {},
  store: podMetricsStore,
  columnLayout: 'declared',
  columns,
});
