/**
 * The downward API (fieldRef, resourceFieldRef) as the kubelet resolves it, for env values and
 * downwardAPI volume files. A resource without a limit reports the node's allocatable, as the
 * kubelet fills unset limits; values are rounded up to the divisor.
 */
import { parseQuantity } from '../../api/quantity.js';
import type { Container, Pod } from '../types.js';

/** Where the pod is: what status.podIP/hostIP report and what limits default to. */
export interface PodPlace {
  podIP: string;
  hostIP: string;
  allocatable: Record<string, string>;
}

/** Raised while preparing a container: the kubelet's CreateContainerConfigError (message as it writes it). */
export class ContainerConfigError extends Error {
  override readonly name = 'ContainerConfigError';
}

const Subscript = /^metadata\.(labels|annotations)\['(.+)'\]$/;

/** `k="v"` lines, sorted, values escaped as Go's %q does: the downwardAPI volume form of a map. */
export const formatMap = (m: Record<string, string> = {}): string =>
  Object.keys(m).sort().map((k) => `${k}=${JSON.stringify(m[k])}`).join('\n');

export function fieldValue(pod: Pod, path: string, place: PodPlace, asFile = false): string {
  const m = Subscript.exec(path);
  if (m) return (pod.metadata[m[1] as 'labels' | 'annotations'] ?? {})[m[2]!] ?? '';
  switch (path) {
    case 'metadata.name': return pod.metadata.name ?? '';
    case 'metadata.namespace': return pod.metadata.namespace ?? '';
    case 'metadata.uid': return pod.metadata.uid ?? '';
    case 'metadata.labels': if (asFile) return formatMap(pod.metadata.labels); break;
    case 'metadata.annotations': if (asFile) return formatMap(pod.metadata.annotations); break;
    case 'spec.nodeName': return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec.serviceAccountName ?? '';
    case 'status.hostIP': case 'status.hostIPs': return place.hostIP;
    case 'status.podIP': case 'status.podIPs': return place.podIP;
  }
  throw new ContainerConfigError(`unsupported fieldPath: ${path}`);
}

export function resourceValue(pod: Pod, own: Container | undefined, ref: { resource: string; containerName?: string; divisor?: string | number }, place: PodPlace): string {
  const container = ref.containerName ? pod.spec.containers.find((c) => c.name === ref.containerName) : own;
  if (!container) throw new ContainerConfigError(`cannot find container ${ref.containerName ?? ''} in pod ${pod.metadata.name ?? ''}`);
  const [kind, resource] = ref.resource.split('.', 2) as ['limits' | 'requests', string];
  if ((kind !== 'limits' && kind !== 'requests') || !['cpu', 'memory', 'ephemeral-storage'].includes(resource ?? ''))
    throw new ContainerConfigError(`unsupported container resource : ${ref.resource}`);
  const given = container.resources?.[kind]?.[resource];
  const fallback = kind === 'limits' ? place.allocatable[resource] : 0;
  const value = parseQuantity(given ?? fallback) ?? 0;
  const divisor = parseQuantity(ref.divisor ?? 1) || 1;
  // CPU in the divisor's millicores, rounded up (convertResourceCPUToString).
  if (resource === 'cpu') return String(Math.ceil(Math.round(value * 1000) / Math.max(1, Math.round(divisor * 1000))));
  return String(Math.ceil(value / divisor));
}
