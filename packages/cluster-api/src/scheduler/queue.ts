/**
 * kube-scheduler's scheduling queue (PriorityQueue, without priorities): pods to try now (activeQ,
 * first in first out), pods waiting out a back-off (backoffQ), and pods that fit nowhere
 * (unschedulablePods). An unschedulable pod costs nothing while it waits: it leaves only on a cluster
 * event that could make it fit (`moveAll`), on a change to the pod itself (`update`), or once it has
 * waited `maxUnschedulableMs` (podMaxInUnschedulablePodsDuration, 5 minutes). Moved pods whose
 * back-off (`initialBackoffMs` doubling per attempt up to `maxBackoffMs`, counted from the last
 * failure) is not over go to backoffQ, flushed every `backoffFlushMs`.
 */
export interface QueueOptions {
  initialBackoffMs: number;
  maxBackoffMs: number;
  maxUnschedulableMs: number;
  /** Called when activeQ gains pods. */
  onActive: () => void;
}

interface QueuedPod {
  /** Scheduling attempts that did not end in a binding. */
  attempts: number;
  /** When the last attempt failed. */
  failedAt: number;
  /** When it entered unschedulablePods. */
  parkedAt: number;
}

/** kube-scheduler flushes backoffQ every second and looks for leftovers every 30 seconds. */
const BackoffFlushMs = 1000;
const LeftoverFlushMs = 30_000;

export class SchedulingQueue {
  private readonly active = new Set<string>();
  private readonly backoff = new Map<string, number>();
  private readonly unschedulable = new Set<string>();
  private readonly info = new Map<string, QueuedPod>();
  private backoffTimer?: NodeJS.Timeout;
  private leftoverTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly opts: QueueOptions) {}

  /** A pending pod seen for the first time (or again after its binding failed to stick). */
  add(key: string): void {
    if (this.closed || this.has(key)) return;
    this.active.add(key);
    this.opts.onActive();
  }

  has(key: string): boolean {
    return this.active.has(key) || this.backoff.has(key) || this.unschedulable.has(key);
  }

  /** Takes every active pod, in the order they became active. */
  drain(): string[] {
    const keys = [...this.active];
    this.active.clear();
    return keys;
  }

  /** Puts back pods `drain` returned that were not tried, ahead of the rest. */
  requeue(keys: readonly string[]): void {
    if (keys.length === 0) return;
    const rest = [...this.active];
    this.active.clear();
    for (const k of [...keys, ...rest]) this.active.add(k);
  }

  /** The attempt found no node: park the pod until something changes. */
  unschedulableNow(key: string, now = Date.now()): void {
    const q = this.failed(key, now);
    q.parkedAt = now;
    this.unschedulable.add(key);
    this.armLeftovers();
  }

  /** The attempt failed for another reason (the binding): try again once the back-off is over. */
  backOffNow(key: string, now = Date.now()): void {
    this.failed(key, now);
    this.toBackoffOrActive(key, now);
  }

  /** A pod bound or gone: forget it. */
  forget(key: string): void {
    this.active.delete(key);
    this.backoff.delete(key);
    this.unschedulable.delete(key);
    this.info.delete(key);
    this.disarmIdle();
  }

  /** The pod itself changed in a way that could change the verdict. */
  update(key: string): void {
    if (!this.unschedulable.has(key)) return;
    this.unschedulable.delete(key);
    this.toBackoffOrActive(key, Date.now());
  }

  /** A cluster event that could make unschedulable pods fit (MoveAllToActiveOrBackoffQueue). */
  moveAll(): number {
    const moved = this.unschedulable.size;
    if (moved === 0) return 0;
    const now = Date.now();
    const keys = [...this.unschedulable];
    this.unschedulable.clear();
    for (const key of keys) this.toBackoffOrActive(key, now);
    return moved;
  }

  get sizes(): { active: number; backoff: number; unschedulable: number } {
    return { active: this.active.size, backoff: this.backoff.size, unschedulable: this.unschedulable.size };
  }

  close(): void {
    this.closed = true;
    clearInterval(this.backoffTimer);
    clearInterval(this.leftoverTimer);
    this.backoffTimer = this.leftoverTimer = undefined;
  }

  private failed(key: string, now: number): QueuedPod {
    this.active.delete(key);
    this.backoff.delete(key);
    const q = this.info.get(key) ?? { attempts: 0, failedAt: now, parkedAt: now };
    q.attempts++;
    q.failedAt = now;
    this.info.set(key, q);
    return q;
  }

  private backoffDuration(q: QueuedPod): number {
    return Math.min(this.opts.initialBackoffMs * 2 ** Math.min(q.attempts - 1, 30), this.opts.maxBackoffMs);
  }

  private toBackoffOrActive(key: string, now: number): void {
    if (this.closed) return;
    const q = this.info.get(key);
    const until = q ? q.failedAt + this.backoffDuration(q) : now;
    if (until <= now) {
      this.active.add(key);
      this.opts.onActive();
    } else {
      this.backoff.set(key, until);
      this.armBackoff();
    }
  }

  private armBackoff(): void {
    if (this.backoffTimer || this.closed) return;
    const every = Math.min(BackoffFlushMs, this.opts.initialBackoffMs);
    this.backoffTimer = setInterval(() => this.flushBackoff(), every);
    this.backoffTimer.unref();
  }

  private flushBackoff(): void {
    const now = Date.now();
    let moved = false;
    for (const [key, until] of this.backoff) {
      if (until > now) continue;
      this.backoff.delete(key);
      this.active.add(key);
      moved = true;
    }
    this.disarmIdle();
    if (moved) this.opts.onActive();
  }

  private armLeftovers(): void {
    if (this.leftoverTimer || this.closed) return;
    this.leftoverTimer = setInterval(() => this.flushLeftovers(), Math.min(LeftoverFlushMs, this.opts.maxUnschedulableMs));
    this.leftoverTimer.unref();
  }

  /** flushUnschedulablePodsLeftover: pods parked longer than maxUnschedulableMs get another try. */
  private flushLeftovers(): void {
    const now = Date.now();
    for (const key of [...this.unschedulable]) {
      if (now - (this.info.get(key)?.parkedAt ?? now) < this.opts.maxUnschedulableMs) continue;
      this.unschedulable.delete(key);
      this.toBackoffOrActive(key, now);
    }
    this.disarmIdle();
  }

  /** No timer runs for an empty queue. */
  private disarmIdle(): void {
    if (this.backoff.size === 0 && this.backoffTimer) clearInterval(this.backoffTimer), (this.backoffTimer = undefined);
    if (this.unschedulable.size === 0 && this.leftoverTimer) clearInterval(this.leftoverTimer), (this.leftoverTimer = undefined);
  }
}
