/**
 * `containerConcurrency` as a hard limit, as Knative's queue-proxy breaker enforces it: at most
 * `capacity` invocations run at once; the next ones wait, first come first served, in a queue of
 * `queueDepth` (10 × capacity, as queue-proxy sizes it); a request finding the queue full is
 * refused (the caller answers 503). A waiting request whose client went away leaves the queue.
 */
export class Breaker {
  #active = 0;
  readonly #queue: (() => void)[] = [];

  constructor(readonly capacity: number, readonly queueDepth = 10 * capacity) {}

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#queue.length;
  }

  /**
   * Runs `run` now when a slot is free (true), later when one frees if the queue has room (a
   * function that takes the still-waiting request out of the queue); false when refused.
   */
  enter(run: () => void): boolean | (() => void) {
    if (this.#active < this.capacity) {
      this.#active++;
      run();
      return true;
    }
    if (this.#queue.length >= this.queueDepth) return false;
    this.#queue.push(run);
    return () => {
      const at = this.#queue.indexOf(run);
      if (at >= 0) this.#queue.splice(at, 1);
    };
  }

  /** A running invocation finished: its slot goes to the oldest waiting one. */
  leave(): void {
    const next = this.#queue.shift();
    if (next) next();
    else this.#active = Math.max(0, this.#active - 1);
  }
}
