/**
 * A pod's quality-of-service class, as Kubernetes' qos.GetPodQOS computes it from the containers'
 * and init containers' cpu and memory (ephemeral containers have no resources): BestEffort when
 * nothing is requested or limited, Guaranteed when every container limits both and the summed
 * requests equal the summed limits, else Burstable. A request left out where a limit is given counts
 * as the limit, as the API's defaulting (SetDefaults_Pod) would have written it.
 */
import { parseQuantity } from './quantity.js';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

interface Resources {
  requests?: Record<string, unknown>;
  limits?: Record<string, unknown>;
}

const Compute = ['cpu', 'memory'] as const;

const positive = (list: Record<string, unknown> | undefined, name: string): number | undefined => {
  const v = parseQuantity(list?.[name]);
  return v !== undefined && v > 0 ? v : undefined;
};

export function podQosClass(spec: { containers?: unknown; initContainers?: unknown } | undefined): QosClass {
  const containers = [spec?.containers, spec?.initContainers].flatMap((l) => (Array.isArray(l) ? l : [])) as { resources?: Resources }[];
  const requests = new Map<string, number>();
  const limits = new Map<string, number>();
  let guaranteed = true;
  for (const c of containers) {
    const r = c && typeof c === 'object' && c.resources && typeof c.resources === 'object' ? c.resources : {};
    const found = new Set<string>();
    for (const name of Compute) {
      const limit = positive(r.limits, name);
      const request = r.requests && name in r.requests ? positive(r.requests, name) : limit;
      if (request !== undefined) requests.set(name, (requests.get(name) ?? 0) + request);
      if (limit !== undefined) (found.add(name), limits.set(name, (limits.get(name) ?? 0) + limit));
    }
    if (found.size < Compute.length) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed && [...requests].every(([name, v]) => limits.get(name) === v) && requests.size === limits.size) return 'Guaranteed';
  return 'Burstable';
}
