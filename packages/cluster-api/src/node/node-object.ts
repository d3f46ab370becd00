/**
 * The Node this agent registers, as the kubelet builds it (initialNode, setNodeStatus): well-known
 * labels, capacity from the machine (CPUs, memory, the data directory's filesystem, max pods),
 * allocatable after what is reserved for the node's own processes (the kubelet's --kube-reserved:
 * the agent's share, by default `cpu=100m,memory=256Mi`) and the kubelet's default hard-eviction
 * reserves (100Mi of memory, 10% of the filesystem), the pressure and Ready conditions with the kubelet's reasons, addresses, the port of
 * its kubelet server, and nodeInfo.
 */
import { readFileSync, statfsSync } from 'node:fs';
import { arch, availableParallelism, platform, release, totalmem } from 'node:os';
import { kibibytes, parseQuantity } from '../api/quantity.js';
import type { Condition, Node, Taint } from './types.js';
import { rfc3339 } from './types.js';

export interface NodeFacts {
  name: string;
  hostIP: string;
  kubeletPort: number;
  maxPods: number;
  dataDir: string;
  kubeletVersion: string;
  runtimeVersion: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  /** What the node's own processes keep (millicores, bytes): not allocatable to pods. */
  reserved?: { cpu?: number; memory?: number };
}

/** The kubelet's --kube-reserved default here: the agent's own share (and, in `serve`, the API server's beside it). */
export const DefaultKubeReserved = 'cpu=100m,memory=256Mi';

/** `cpu=100m,memory=256Mi` (the kubelet's --kube-reserved form) as millicores and bytes; throws what is wrong. */
export function parseReserved(raw: string): { cpu?: number; memory?: number } {
  const out: { cpu?: number; memory?: number } = {};
  for (const pair of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [key, value = ''] = pair.split('=');
    const n = parseQuantity(value);
    if ((key !== 'cpu' && key !== 'memory') || n === undefined || !Number.isFinite(n) || n < 0) throw new Error(`"${pair}" is not cpu=<quantity> or memory=<quantity>`);
    if (key === 'cpu') out.cpu = Math.round(n * 1000);
    else out.memory = Math.round(n);
  }
  return out;
}

/** Millicores as Kubernetes writes them: whole CPUs plainly, else in m. */
const cpuQuantity = (milli: number): string => (milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`);

/** Go's GOARCH names. */
const goArch = (): string => ({ x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' })[arch() as string] ?? arch();

const readTrimmed = (file: string, fallback = ''): string => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return fallback;
  }
};

const osImage = (): string => /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readTrimmed('/etc/os-release'))?.[1] ?? `${platform()} ${release()}`;

function resources(facts: NodeFacts): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const memory = totalmem();
  let disk = 0;
  try {
    const fs = statfsSync(facts.dataDir);
    disk = fs.blocks * fs.bsize;
  } catch {
    /* an unknown filesystem reports 0, as cAdvisor would report none */
  }
  const cpus = availableParallelism();
  const reserved = facts.reserved ?? {};
  const base = { 'hugepages-1Gi': '0', 'hugepages-2Mi': '0', pods: String(facts.maxPods) };
  return {
    capacity: { ...base, cpu: String(cpus), 'ephemeral-storage': kibibytes(disk), memory: kibibytes(memory) },
    allocatable: {
      ...base, cpu: cpuQuantity(Math.max(0, cpus * 1000 - (reserved.cpu ?? 0))), 'ephemeral-storage': String(Math.floor(disk * 0.9)),
      memory: kibibytes(Math.max(0, memory - 100 * 1024 * 1024 - (reserved.memory ?? 0))),
    },
  };
}

/** The kubelet's four node conditions; a healthy node reports no pressure. */
export function nodeConditions(ready: boolean, previous: readonly Condition[] = [], now = rfc3339()): Condition[] {
  const c = (type: string, status: 'True' | 'False', reason: string, message: string): Condition => {
    const was = previous.find((p) => p.type === type);
    return { type, status, lastHeartbeatTime: now, lastTransitionTime: was?.status === status && was.lastTransitionTime ? was.lastTransitionTime : now, reason, message };
  };
  return [
    c('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
    c('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
    c('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
    ready ? c('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status') : c('Ready', 'False', 'KubeletNotReady', 'container runtime is starting'),
  ];
}

export function nodeStatus(facts: NodeFacts, previous: readonly Condition[] = []): NonNullable<Node['status']> {
  const machineID = readTrimmed('/etc/machine-id');
  return {
    ...resources(facts),
    conditions: nodeConditions(true, previous),
    addresses: [{ type: 'InternalIP', address: facts.hostIP }, { type: 'Hostname', address: facts.name }],
    daemonEndpoints: { kubeletEndpoint: { Port: facts.kubeletPort } },
    nodeInfo: {
      machineID,
      systemUUID: readTrimmed('/sys/class/dmi/id/product_uuid', machineID),
      bootID: readTrimmed('/proc/sys/kernel/random/boot_id'),
      kernelVersion: release(),
      osImage: osImage(),
      containerRuntimeVersion: facts.runtimeVersion,
      kubeletVersion: facts.kubeletVersion,
      kubeProxyVersion: '',
      operatingSystem: platform(),
      architecture: goArch(),
    },
  };
}

export function nodeObject(facts: NodeFacts): Node {
  const os = platform();
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: facts.name,
      labels: {
        'beta.kubernetes.io/arch': goArch(),
        'beta.kubernetes.io/os': os,
        'kubernetes.io/arch': goArch(),
        'kubernetes.io/hostname': facts.name,
        'kubernetes.io/os': os,
        ...facts.labels,
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec: facts.taints?.length ? { taints: facts.taints } : {},
    status: nodeStatus(facts),
  };
}
