/**
 * Request timeouts without a timer per request. Every invocation of a runtime has the same timeout,
 * so deadlines expire in arrival order: a FIFO list with one timer, armed for the oldest. Entering
 * and leaving cost a few pointer writes; setTimeout and clearTimeout per request cost a timer-list
 * insert and removal each (about 4 % of a hello request's CPU in the profile).
 */
import { performance } from 'node:perf_hooks';
export interface Timed {
  /** When it expires (performance.now() ms); links of the list, owned by Deadlines. */
  deadline: number;
  prevTimed: Timed | undefined;
  nextTimed: Timed | undefined;
}

export class Deadlines<T extends Timed> {
  #head: T | undefined = undefined;
  #tail: T | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;

  constructor(private readonly ms: number, private readonly expire: (item: T) => void) {}

  add(item: T, now: number): void {
    item.deadline = now + this.ms;
    item.prevTimed = this.#tail;
    item.nextTimed = undefined;
    if (this.#tail) this.#tail.nextTimed = item;
    else this.#head = item;
    this.#tail = item;
    if (this.#timer === undefined) this.#arm();
  }

  /** Unlinks `item` if it is listed; the timer stays armed and finds nothing due when it fires. */
  remove(item: T): void {
    if (item.prevTimed === undefined && this.#head !== item) return;
    if (item.prevTimed) item.prevTimed.nextTimed = item.nextTimed;
    else this.#head = item.nextTimed as T | undefined;
    if (item.nextTimed) item.nextTimed.prevTimed = item.prevTimed;
    else this.#tail = item.prevTimed as T | undefined;
    item.prevTimed = item.nextTimed = undefined;
  }

  #arm(): void {
    const head = this.#head;
    if (head === undefined) return;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, head.deadline - performance.now()));
    // A pending deadline must not keep an otherwise idle process alive; the request it guards does.
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    const now = performance.now();
    while (this.#head !== undefined && this.#head.deadline <= now) {
      const due = this.#head;
      this.remove(due);
      this.expire(due);
    }
    this.#arm();
  }
}
