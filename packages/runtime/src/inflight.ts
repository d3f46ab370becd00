/**
 * The invocations in progress. A drain (SIGTERM, stop(), a dev reload retiring the old version)
 * waits until none is left, or until its deadline; the deadline timer is ref'd, so the process stays
 * up for the drain even when nothing else is pending (a handle that never settles holds no handle
 * of its own).
 */
export class InFlight {
  #count = 0;
  #waiting: (() => void)[] = [];

  get count(): number {
    return this.#count;
  }

  enter(): void {
    this.#count++;
  }

  leave(): void {
    if (--this.#count > 0 || this.#waiting.length === 0) return;
    for (const wake of this.#waiting.splice(0)) wake();
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
