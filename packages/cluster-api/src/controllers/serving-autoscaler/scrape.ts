/**
 * Where the autoscaler reads load: each ready pod's `/metrics/autoscaling` (the function runtime
 * reports queue-proxy's gauges there), and the gateway's activator (`/activator/stats`, a long
 * poll answered at once when it holds a request: the poke), whose numbers are added up per
 * revision between two decisions.
 */
import type { LoadReport } from '../../serving/gateway/activator.js';

/** The runtime's stats path (packages/runtime src/server.ts AutoscalingStatsPath). */
export const PodStatsPath = '/metrics/autoscaling';
const ScrapeTimeoutMs = 800;

export interface PodLoad { concurrency: number; rps: number }

const gauge = (text: string, name: string): number | undefined => {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+|NaN)$`, 'm').exec(text);
  const v = m ? Number(m[1]) : NaN;
  return Number.isFinite(v) && v >= 0 ? v : undefined;
};

/** One pod's load since its previous read; undefined when it does not report (not the function runtime, or not answering). */
export async function scrapePod(ip: string, port: number): Promise<PodLoad | undefined> {
  try {
    const host = ip.includes(':') ? `[${ip}]` : ip;
    const res = await fetch(`http://${host}:${port}${PodStatsPath}`, { signal: AbortSignal.timeout(ScrapeTimeoutMs) });
    if (res.status !== 200) return void (await res.body?.cancel());
    const text = await res.text();
    const concurrency = gauge(text, 'queue_average_concurrent_requests');
    const rps = gauge(text, 'queue_requests_per_second');
    return concurrency === undefined || rps === undefined ? undefined : { concurrency, rps };
  } catch {
    return undefined;
  }
}

/** What the gateway saw of one revision over the periods added up. */
export interface GatewayLoad { concurrency: number; held: number; rps: number; waiting: number }

/** The gateway's reports, added up per revision until a decision takes them. */
export class GatewayLoads {
  private readonly sums = new Map<string, { concurrency: number; held: number; requests: number; ms: number; waiting: number }>();
  /** The last averages taken: what a decision sooner than the next report goes on. */
  private readonly last = new Map<string, GatewayLoad>();

  add(report: LoadReport): void {
    const ms = Math.max(report.periodMs, 1);
    for (const r of report.revisions) {
      const key = `${r.namespace}/${r.revision}`;
      const s = this.sums.get(key) ?? { concurrency: 0, held: 0, requests: 0, ms: 0, waiting: 0 };
      s.concurrency += r.concurrency * ms;
      s.held += r.held * ms;
      s.requests += (r.rps * ms) / 1000;
      s.ms += ms;
      s.waiting = r.waiting;
      this.sums.set(key, s);
    }
  }

  /**
   * The averages since the previous take for `key`; when no report came since, the previous
   * take's (a decision a poke asked for comes between reports); zero when the gateway saw nothing of it.
   */
  take(key: string): GatewayLoad {
    const s = this.sums.get(key);
    this.sums.delete(key);
    if (!s || s.ms <= 0) return this.last.get(key) ?? { concurrency: 0, held: 0, rps: 0, waiting: 0 };
    const load = { concurrency: s.concurrency / s.ms, held: s.held / s.ms, rps: (s.requests * 1000) / s.ms, waiting: s.waiting };
    this.last.set(key, load);
    return load;
  }

  /** Forgets a revision that is gone. */
  forget(key: string): void {
    this.sums.delete(key);
    this.last.delete(key);
  }
}

/** Whether `body` is a LoadReport as the gateway writes it. */
export function isLoadReport(body: unknown): body is LoadReport {
  const b = body as LoadReport;
  return !!b && typeof b.periodMs === 'number' && Array.isArray(b.poked) && Array.isArray(b.revisions)
    && b.revisions.every((r) => typeof r?.namespace === 'string' && typeof r.revision === 'string' && [r.concurrency, r.held, r.rps, r.waiting].every((n) => typeof n === 'number'));
}
