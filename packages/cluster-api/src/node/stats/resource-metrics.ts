/**
 * The kubelet's `/metrics/resource` (the Prometheus text metrics-server scrapes): each running
 * container's, each pod's and the node's cumulative CPU seconds and memory working set, with the
 * time they were read (ms since the epoch), and the containers' start times. Read on each scrape
 * from the runtimes (`containerStats`) and the machine (usage.ts); the reader of two scrapes makes
 * the rate (src/metrics/).
 */
import type { RuntimeService } from '../runtime/cri.js';
import { nodeUsage, type Usage } from './usage.js';

export interface ContainerSample {
  namespace: string;
  pod: string;
  container: string;
  /** When the container started (ms since the epoch). */
  startedAt: number;
  usage: Usage;
}

export interface ResourceSample {
  /** When it was read (ms since the epoch). */
  at: number;
  node: Usage;
  containers: ContainerSample[];
}

/** The usage of every running container the runtimes measure, and the node's, now. */
export function sampleResources(runtimes: readonly RuntimeService[]): ResourceSample {
  const containers: ContainerSample[] = [];
  for (const runtime of new Set(runtimes)) {
    if (!runtime.containerStats) continue;
    for (const sandbox of runtime.listPodSandbox()) {
      if (sandbox.state !== 'SANDBOX_READY') continue;
      for (const c of runtime.listContainers({ podSandboxId: sandbox.id })) {
        if (c.state !== 'CONTAINER_RUNNING') continue;
        const usage = runtime.containerStats(c.id);
        if (usage) containers.push({ namespace: sandbox.metadata.namespace, pod: sandbox.metadata.name, container: c.metadata.name, startedAt: c.startedAt ?? c.createdAt, usage });
      }
    }
  }
  return { at: Date.now(), node: nodeUsage(), containers };
}

const label = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const labels = (l: Record<string, string>): string => `{${Object.entries(l).map(([k, v]) => `${k}="${label(v)}"`).join(',')}}`;

interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: { labels?: Record<string, string>; value: number }[];
}

/** The Prometheus text exposition of a sample, families sorted by name as the kubelet's registry writes them. */
export function resourceMetricsText(s: ResourceSample): string {
  const byPod = new Map<string, { namespace: string; pod: string; cpu: number; memory: number }>();
  for (const c of s.containers) {
    const key = `${c.namespace}/${c.pod}`;
    const p = byPod.get(key) ?? { namespace: c.namespace, pod: c.pod, cpu: 0, memory: 0 };
    p.cpu += c.usage.cpuNanoSeconds;
    p.memory += c.usage.workingSetBytes;
    byPod.set(key, p);
  }
  const ofContainer = (c: ContainerSample) => ({ container: c.container, namespace: c.namespace, pod: c.pod });
  const families: Family[] = [
    { name: 'container_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed by the container in core-seconds', type: 'counter', samples: s.containers.map((c) => ({ labels: ofContainer(c), value: c.usage.cpuNanoSeconds / 1e9 })) },
    { name: 'container_memory_working_set_bytes', help: 'Current working set of the container in bytes', type: 'gauge', samples: s.containers.map((c) => ({ labels: ofContainer(c), value: c.usage.workingSetBytes })) },
    { name: 'container_start_time_seconds', help: 'Start time of the container since unix epoch in seconds', type: 'gauge', samples: s.containers.map((c) => ({ labels: ofContainer(c), value: c.startedAt / 1000 })) },
    { name: 'node_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed by the node in core-seconds', type: 'counter', samples: [{ value: s.node.cpuNanoSeconds / 1e9 }] },
    { name: 'node_memory_working_set_bytes', help: 'Current working set of the node in bytes', type: 'gauge', samples: [{ value: s.node.workingSetBytes }] },
    { name: 'pod_cpu_usage_seconds_total', help: 'Cumulative cpu time consumed by the pod in core-seconds', type: 'counter', samples: [...byPod.values()].map((p) => ({ labels: { namespace: p.namespace, pod: p.pod }, value: p.cpu / 1e9 })) },
    { name: 'pod_memory_working_set_bytes', help: 'Current working set of the pod in bytes', type: 'gauge', samples: [...byPod.values()].map((p) => ({ labels: { namespace: p.namespace, pod: p.pod }, value: p.memory })) },
    { name: 'resource_scrape_error', help: '1 if there was an error while getting container metrics, 0 otherwise', type: 'gauge', samples: [{ value: 0 }] },
  ];
  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} [STABLE] ${f.help}`, `# TYPE ${f.name} ${f.type}`);
    // A gauge without a time (resource_scrape_error) is the scrape's own.
    for (const x of f.samples) lines.push(`${f.name}${x.labels ? labels(x.labels) : ''} ${x.value}${f.name === 'resource_scrape_error' ? '' : ` ${s.at}`}`);
  }
  return `${lines.join('\n')}\n`;
}
