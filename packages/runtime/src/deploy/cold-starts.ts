/**
 * A Knative Service's cold starts as the local cluster's gateway counts them (its `/metrics`:
 * `activator_cold_start_seconds`, the time from a request arriving for a revision with no ready
 * pod to the end of its answer): per revision, how many, the last, the mean, and p50 / p99 read
 * off the histogram (the upper bound of the bucket the quantile falls in).
 */
import { gatewayAddress } from './where.js';
import type { KubeClient } from '@func/kube-client';

export interface ColdStartLine {
  revision: string;
  count: number;
  /** Seconds. */
  last: number;
  mean: number;
  p50: number;
  p99: number;
}

const Sample = /^(activator_cold_start_seconds_bucket|activator_cold_start_seconds_sum|activator_cold_start_seconds_count|activator_last_cold_start_seconds)\{([^}]*)\} ([0-9.eE+-]+)$/;

const labelsOf = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))]));

/** The revisions of `namespace` in `revisions` that had a cold start, from the gateway's Prometheus text. */
export function coldStartsOf(metrics: string, namespace: string, revisions: readonly string[]): ColdStartLine[] {
  const by = new Map<string, { buckets: [number, number][]; sum: number; count: number; last: number }>();
  for (const line of metrics.split('\n')) {
    const m = Sample.exec(line.trim());
    if (!m) continue;
    const labels = labelsOf(m[2]!);
    if (labels.namespace !== namespace || !revisions.includes(labels.revision!)) continue;
    const r = by.get(labels.revision!) ?? { buckets: [], sum: 0, count: 0, last: 0 };
    const v = Number(m[3]);
    if (m[1] === 'activator_cold_start_seconds_bucket') r.buckets.push([labels.le === '+Inf' ? Infinity : Number(labels.le), v]);
    else if (m[1] === 'activator_cold_start_seconds_sum') r.sum = v;
    else if (m[1] === 'activator_cold_start_seconds_count') r.count = v;
    else r.last = v;
    by.set(labels.revision!, r);
  }
  const quantile = (buckets: [number, number][], count: number, q: number) => {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    return sorted.find(([, n]) => n >= q * count)?.[0] ?? Infinity;
  };
  return revisions.flatMap((revision) => {
    const r = by.get(revision);
    return r && r.count > 0 ? [{ revision, count: r.count, last: r.last, mean: r.sum / r.count, p50: quantile(r.buckets, r.count, 0.5), p99: quantile(r.buckets, r.count, 0.99) }] : [];
  });
}

/** The cold starts the cluster's gateway counted, when it publishes one this machine reaches; [] otherwise. */
export async function coldStarts(kube: KubeClient, namespace: string, revisions: readonly string[]): Promise<ColdStartLine[]> {
  const gateway = await gatewayAddress(kube);
  if (!gateway) return [];
  try {
    const res = await fetch(new URL('/metrics', gateway), { signal: AbortSignal.timeout(3000) });
    return res.ok ? coldStartsOf(await res.text(), namespace, revisions) : [];
  } catch {
    return [];
  }
}
