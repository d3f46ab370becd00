/**
 * A count averaged over time (the area under it per report), as Knative's queue-proxy and
 * activator report concurrency: a request that came and went between two reports still counts
 * for the part of the period it was there. `now` in ms (performance.now() in use, any clock in tests).
 */
export class TimeAverage {
  value = 0;
  private area = 0;
  private at: number;
  private since: number;

  constructor(now: number) {
    this.at = now;
    this.since = now;
  }

  add(delta: number, now: number): void {
    this.area += this.value * (now - this.at);
    this.at = now;
    this.value += delta;
  }

  /** The average since the previous report and the period's length; starts the next period. */
  report(now: number): { average: number; ms: number } {
    this.add(0, now);
    const ms = now - this.since;
    const average = ms > 0 ? this.area / ms : this.value;
    this.area = 0;
    this.since = now;
    return { average, ms };
  }
}
