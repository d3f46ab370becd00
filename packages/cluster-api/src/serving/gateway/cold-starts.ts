/**
 * Cold start as a number: the time from a request arriving for a revision with no ready pod to
 * the end of its answer, per revision, as a Prometheus histogram on the gateway's `/metrics`
 * (`activator_cold_start_seconds`, labels namespace and revision), beside the last one
 * (`activator_last_cold_start_seconds`) and the requests the gateway answered per revision.
 */
const Buckets = [0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series { counts: number[]; sum: number; count: number; last: number }

const label = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class ColdStarts {
  private readonly series = new Map<string, Series>();
  private readonly requests = new Map<string, number>();

  private key(namespace: string, revision: string): string {
    return `namespace="${label(namespace)}",revision="${label(revision)}"`;
  }

  answered(namespace: string, revision: string): void {
    const k = this.key(namespace, revision);
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1);
  }

  observe(namespace: string, revision: string, seconds: number): void {
    const k = this.key(namespace, revision);
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: Buckets.map(() => 0), sum: 0, count: 0, last: 0 }));
    Buckets.forEach((le, i) => { if (seconds <= le) s!.counts[i]!++; });
    s.sum += seconds;
    s.count++;
    s.last = seconds;
  }

  text(): string {
    const out: string[] = [
      '# HELP activator_cold_start_seconds Time from a request arriving for a revision with no ready pod to the end of its answer.',
      '# TYPE activator_cold_start_seconds histogram',
    ];
    for (const [k, s] of this.series) {
      Buckets.forEach((le, i) => out.push(`activator_cold_start_seconds_bucket{${k},le="${le}"} ${s.counts[i]}`));
      out.push(`activator_cold_start_seconds_bucket{${k},le="+Inf"} ${s.count}`, `activator_cold_start_seconds_sum{${k}} ${s.sum}`, `activator_cold_start_seconds_count{${k}} ${s.count}`);
    }
    out.push('# HELP activator_last_cold_start_seconds The latest cold start of the revision.', '# TYPE activator_last_cold_start_seconds gauge');
    for (const [k, s] of this.series) out.push(`activator_last_cold_start_seconds{${k}} ${s.last}`);
    out.push('# HELP activator_request_count Requests the gateway answered, per revision.', '# TYPE activator_request_count counter');
    for (const [k, n] of this.requests) out.push(`activator_request_count{${k}} ${n}`);
    return `${out.join('\n')}\n`;
  }
}
