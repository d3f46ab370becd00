/**
 * Background compaction: history is kept for at least `keepRevisions` revisions AND at least
 * `minAgeMs`, whichever retains more. Watchers and paged lists that fall behind that window get
 * Compacted (410 Gone above), and relist — the same contract as kube-apiserver on etcd.
 *
 * Revisions carry no timestamps, so the compactor samples the current revision on every tick (as
 * kube-apiserver's compactor does): every revision ≤ a sample taken before `now - minAgeMs` is at
 * least that old.
 */
import { StorageError } from './errors.js';
import type { Storage } from './interface.js';

export interface CompactionPolicy {
  /** How often to compact. */
  readonly intervalMs: number;
  /** Never compact away the newest this-many revisions. */
  readonly keepRevisions: number;
  /** Never compact away revisions younger than this. */
  readonly minAgeMs: number;
}

export const DEFAULT_COMPACTION: CompactionPolicy = { intervalMs: 60_000, keepRevisions: 1_000, minAgeMs: 5 * 60_000 };

/** Throws InvalidArgument for a policy that would spin (interval ≤ 0) or make no sense. */
export function checkCompactionPolicy(policy: CompactionPolicy): void {
  const ok =
    Number.isFinite(policy.intervalMs) &&
    policy.intervalMs > 0 &&
    Number.isSafeInteger(policy.keepRevisions) &&
    policy.keepRevisions >= 0 &&
    Number.isFinite(policy.minAgeMs) &&
    policy.minAgeMs >= 0;
  if (!ok) {
    throw new StorageError('InvalidArgument', '', `invalid compaction policy ${JSON.stringify(policy)}: intervalMs > 0, keepRevisions and minAgeMs ≥ 0`);
  }
}

type Compactable = Pick<Storage, 'currentRevision' | 'compactedRevision' | 'compact'>;

interface Sample {
  readonly at: number;
  readonly revision: number;
}

export class Compactor {
  private samples: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** The last failure, for health reporting; cleared by a successful round. */
  lastError: Error | undefined;

  constructor(
    private readonly storage: Compactable,
    readonly policy: CompactionPolicy = DEFAULT_COMPACTION,
    private readonly now: () => number = Date.now,
  ) {
    checkCompactionPolicy(policy);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick().catch(() => undefined), this.policy.intervalMs);
    // Compaction must never keep a process alive that has nothing else to do.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  get started(): boolean {
    return this.timer !== undefined;
  }

  /** One round: sample, then compact to the retention floor. Resolves to the compacted revision. */
  tick(): Promise<number> {
    // Rounds never overlap: a slow compaction is not started twice.
    this.running ??= this.round().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async round(): Promise<number> {
    try {
      const current = await this.storage.currentRevision();
      const target = this.floor(current, this.now());
      const compacted = await this.storage.compactedRevision();
      const result = target > compacted ? await this.storage.compact(target) : compacted;
      this.lastError = undefined;
      return result;
    } catch (err) {
      this.lastError = err as Error;
      throw err;
    }
  }

  /** Records a sample and returns the highest revision the policy allows compacting to. */
  private floor(current: number, now: number): number {
    this.samples.push({ at: now, revision: current });
    const cutoff = now - this.policy.minAgeMs;
    // Keep only the newest sample old enough, plus the younger ones still ageing.
    const old = this.samples.filter((s) => s.at <= cutoff);
    this.samples = [...old.slice(-1), ...this.samples.filter((s) => s.at > cutoff)];
    const byAge = old.at(-1)?.revision ?? 0;
    return Math.max(0, Math.min(byAge, current - this.policy.keepRevisions));
  }
}
