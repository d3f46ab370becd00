/**
 * The activator, in the gateway's data path (Knative's activator and its throttler): each
 * revision's ready pods (its Endpoints) each take up to `containerConcurrency` requests at once
 * (no limit when 0); a request goes straight to the pod with the fewest in flight that has room.
 * When none has (no ready pod: the revision is at zero or starting; or every one is full), the
 * request is held — at most `maxHeld` per revision, each until its own deadline — and, when it is
 * the first waiting, the autoscaler is poked at once (a stats reader waiting for news is answered now, not on its next
 * read); held requests go out, oldest first, as pods become ready or slots free.
 *
 * It counts what passes (held and forwarded, time-averaged; arrivals), which the autoscaler reads
 * for every revision: the only load it has for pods that do not report their own (images other
 * than the function runtime), and the requests held while there is no pod to report them.
 */
import { performance } from 'node:perf_hooks';
import { TimeAverage } from './load.js';

export interface PodSlot {
  ip: string;
  port: number;
  inflight: number;
}

export interface RevisionLoad {
  namespace: string;
  revision: string;
  /** Requests held or forwarded, time-averaged over the period. */
  concurrency: number;
  /** Requests held (waiting for a pod), time-averaged over the period. */
  held: number;
  /** Arrivals per second over the period. */
  rps: number;
  /** Requests waiting now. */
  waiting: number;
  readyPods: number;
}

export interface LoadReport {
  periodMs: number;
  /** Revisions ("namespace/name") that held a request since the previous report. */
  poked: string[];
  revisions: RevisionLoad[];
}

interface Waiter {
  grant(pod: PodSlot): void;
}

class RevisionState {
  /** The ready pods in a fixed order, and where the next look starts: pods equally loaded take turns. */
  pods: PodSlot[] = [];
  private next = 0;
  capacity = Infinity;
  readonly waiters: Waiter[] = [];
  readonly total: TimeAverage;
  readonly held: TimeAverage;
  arrivals = 0;

  constructor(now: number) {
    this.total = new TimeAverage(now);
    this.held = new TimeAverage(now);
  }

  /**
   * The ready pod with the fewest in flight that has room; among equals, the first after the one
   * picked last (round robin), so one request after another, or a retry after a pod failed, goes to
   * another pod rather than always to the first.
   */
  pick(): PodSlot | undefined {
    const n = this.pods.length;
    let best = -1;
    for (let k = 0; k < n; k++) {
      const i = (this.next + k) % n;
      const p = this.pods[i]!;
      if (p.inflight < this.capacity && (best < 0 || p.inflight < this.pods[best]!.inflight)) best = i;
    }
    if (best < 0) return undefined;
    this.next = (best + 1) % n;
    return this.pods[best];
  }
}

export type Acquired = { pod: PodSlot; cold: boolean } | 'timeout' | 'full' | 'gone';

export class Activator {
  private readonly states = new Map<string, RevisionState>();
  private readonly poked = new Set<string>();
  private readonly listeners = new Set<(key: string) => void>();
  private lastReport: number;

  constructor(private readonly opts: { maxHeld: number; now?: () => number }) {
    this.lastReport = this.now();
  }

  private now(): number {
    return this.opts.now ? this.opts.now() : performance.now();
  }

  private state(key: string): RevisionState {
    let s = this.states.get(key);
    if (!s) this.states.set(key, (s = new RevisionState(this.now())));
    return s;
  }

  /** A revision's ready pods (from its Endpoints) and its containerConcurrency (0: no limit); held requests go out to new room. */
  setPods(key: string, addresses: { ip: string; port: number }[], containerConcurrency: number): void {
    const s = this.state(key);
    s.capacity = containerConcurrency > 0 ? containerConcurrency : Infinity;
    const had = new Map(s.pods.map((p) => [`${p.ip}:${p.port}`, p]));
    const next = new Map<string, PodSlot>();
    for (const a of addresses) {
      const id = `${a.ip}:${a.port}`;
      next.set(id, had.get(id) ?? { ip: a.ip, port: a.port, inflight: 0 });
    }
    s.pods = [...next.values()];
    this.drain(s);
  }

  readyPods(key: string): number {
    return this.states.get(key)?.pods.length ?? 0;
  }

  /** Requests held for a revision now. */
  waiting(key: string): number {
    return this.states.get(key)?.waiters.length ?? 0;
  }

  /**
   * A pod for a request to `key`: at once when one has room, else after holding it up to `holdMs`
   * ('timeout' then); 'full' when `maxHeld` already wait; 'gone' when `cancelled` fires first.
   * `cold`: it arrived when the revision had no ready pod.
   */
  acquire(key: string, holdMs: number, cancelled: (stop: () => void) => () => void): Promise<Acquired> {
    const s = this.state(key);
    const now = this.now();
    s.arrivals++;
    s.total.add(1, now);
    const cold = s.pods.length === 0;
    const pod = s.waiters.length === 0 ? s.pick() : undefined;
    if (pod) {
      pod.inflight++;
      return Promise.resolve({ pod, cold });
    }
    if (s.waiters.length >= this.opts.maxHeld || holdMs <= 0) {
      s.total.add(-1, now);
      return Promise.resolve(s.waiters.length >= this.opts.maxHeld ? 'full' : 'timeout');
    }
    s.held.add(1, now);
    const held = new Promise<Acquired>((resolve) => {
      const leave = (result: Acquired) => {
        clearTimeout(timer);
        unlisten();
        const at = s.waiters.indexOf(waiter);
        if (at >= 0) s.waiters.splice(at, 1);
        s.held.add(-1, this.now());
        if (typeof result === 'string') s.total.add(-1, this.now());
        resolve(result);
      };
      const waiter: Waiter = { grant: (p) => leave({ pod: p, cold }) };
      const timer = setTimeout(() => leave('timeout'), holdMs);
      const unlisten = cancelled(() => leave('gone'));
      s.waiters.push(waiter);
    });
    // The first to wait pokes; the next ones find the autoscaler told.
    if (s.waiters.length === 1) this.poke(key);
    return held;
  }

  /** A request forwarded to `pod` is over: its slot goes to the oldest held request. */
  release(key: string, pod: PodSlot): void {
    const s = this.states.get(key);
    pod.inflight = Math.max(0, pod.inflight - 1);
    if (!s) return;
    s.total.add(-1, this.now());
    this.drain(s);
  }

  private drain(s: RevisionState): void {
    while (s.waiters.length > 0) {
      const pod = s.pick();
      if (!pod) return;
      pod.inflight++;
      s.waiters[0]!.grant(pod);
    }
  }

  private poke(key: string): void {
    this.poked.add(key);
    for (const l of [...this.listeners]) l(key);
  }

  /** Whether a revision held a request since the previous report. */
  get hasNews(): boolean {
    return this.poked.size > 0;
  }

  /** Calls `fn` at every poke, with the revision poked; returns the unsubscribe. */
  onPoke(fn: (key: string) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Every revision's load since the previous report; starts the next period. Revisions with nothing left are forgotten. */
  report(): LoadReport {
    const now = this.now();
    const revisions: RevisionLoad[] = [];
    for (const [key, s] of this.states) {
      const total = s.total.report(now);
      const held = s.held.report(now);
      const at = key.indexOf('/');
      revisions.push({
        namespace: key.slice(0, at), revision: key.slice(at + 1), concurrency: total.average, held: held.average,
        rps: total.ms > 0 ? (s.arrivals * 1000) / total.ms : 0, waiting: s.waiters.length, readyPods: s.pods.length,
      });
      s.arrivals = 0;
    }
    const report = { periodMs: now - this.lastReport, poked: [...this.poked], revisions };
    this.poked.clear();
    this.lastReport = now;
    return report;
  }

  /** Forgets a revision that is gone (its Endpoints deleted), once nothing waits for it. */
  forget(key: string): void {
    const s = this.states.get(key);
    if (s && s.waiters.length === 0 && s.total.value === 0) this.states.delete(key);
    else if (s) s.pods = [];
  }
}
