/**
 * The invocations in progress (running or waiting for a `containerConcurrency` slot). A drain
 * (SIGTERM, stop(), a dev reload retiring the old version) waits until none is left, or until its
 * deadline; the deadline timer is ref'd, so the process stays up for the drain even when nothing
 * else is pending (a handle that never settles holds no handle of its own).
 *
 * It also keeps what Knative's queue-proxy reports to the autoscaler: the number in progress
 * averaged over time (the area under the count, read per report) and the requests that arrived.
 */
import { performance } from 'node:perf_hooks';

export interface ConcurrencyReport {
  /** In-flight requests, time-averaged since the previous report. */
  averageConcurrency: number;
  /** Requests that arrived since the previous report, per second. */
  requestsPerSecond: number;
}

export class InFlight {
  #count = 0;
  #waiting: (() => void)[] = [];
  /** ∫ count dt (ms) since the last report, up to #at. */
  #area = 0;
  #at = performance.now();
  #since = this.#at;
  #arrived = 0;

  get count(): number {
    return this.#count;
  }

  #advance(now: number): void {
    this.#area += this.#count * (now - this.#at);
    this.#at = now;
  }

  enter(now = performance.now()): void {
    this.#advance(now);
    this.#count++;
    this.#arrived++;
  }

  leave(now = performance.now()): void {
    this.#advance(now);
    if (--this.#count > 0 || this.#waiting.length === 0) return;
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** The averages since the previous report (the first: since construction); starts the next period. */
  report(now = performance.now()): ConcurrencyReport {
    this.#advance(now);
    const ms = now - this.#since;
    const out = ms > 0
      ? { averageConcurrency: this.#area / ms, requestsPerSecond: (this.#arrived * 1000) / ms }
      : { averageConcurrency: this.#count, requestsPerSecond: 0 };
    this.#area = 0;
    this.#arrived = 0;
    this.#since = now;
    return out;
  }

  /** True once nothing is in flight, false when `ms` passed first. */
  drained(ms: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiting = this.#waiting.filter((w) => w !== wake);
        resolve(false);
      }, ms);
      this.#waiting.push(wake);
    });
  }
}
