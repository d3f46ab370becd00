/**
 * The KPA's decision, pure: fed one sample per second of a revision's load (the metric summed over
 * its pods and what the activator holds) and the time, it answers how many pods the revision
 * wants, as Knative's autoscaler does (pkg/autoscaler/scaling):
 *
 * - the stable and panic averages over their windows (a second with no sample counts as zero; a
 *   revision younger than a window is averaged over its age);
 * - desired = ⌈average / target⌉ for each, held between ⌊ready / max-scale-down-rate⌋ and
 *   ⌈ready × max-scale-up-rate⌉ (ready counted as at least 1);
 * - panic starts when the panic window's want reaches panic-threshold × ready pods, and lasts at
 *   least a stable window after the last time it did; in panic the count is the larger of the two
 *   wants and never goes down;
 * - scale-down-delay: the count goes down only to the highest wanted over that delay;
 * - from zero, at least activation-scale; always within min-scale and max-scale;
 * - scale to zero (min-scale 0, enable-scale-to-zero): only once a whole stable window was
 *   observed, zero has been wanted for the scale-to-zero grace period and the last traffic is
 *   older than the pod retention period;
 * - the excess burst capacity (Knative's EBC, over the panic average): ready × the per-pod capacity
 *   − target-burst-capacity − the panic average, floored; 0 when target-burst-capacity is 0 (the
 *   activator only at zero), -1 when it is -1 (the activator always). Negative puts the activator
 *   in the revision's path (burst-mode.ts).
 */
import type { ScalingSpec } from './config.js';

export interface Decision {
  desired: number;
  /** The stable and panic averages of the metric (the whole revision). */
  stable: number;
  panic: number;
  panicking: boolean;
  /** Spare capacity beyond target-burst-capacity (Knative's excess burst capacity): negative puts the activator in the path. */
  excessBurstCapacity: number;
  /** Why it is what it is, for the log and Events. */
  reason: string;
}

export class Decider {
  /** Sample per whole second (ms of the second → value); only the stable window's are kept. */
  private readonly buckets = new Map<number, number>();
  private first: number | undefined;
  private lastTraffic = -Infinity;
  private panicSince: number | undefined;
  private maxPanicPods = 0;
  /** What was wanted when, over scale-down-delay. */
  private recent: { at: number; want: number }[] = [];
  private zeroSince: number | undefined;

  constructor(public spec: ScalingSpec) {}

  /** The revision's load in the second of `at` (a second sampled twice keeps the larger). */
  record(at: number, value: number): void {
    const second = Math.floor(at / 1000) * 1000;
    this.first ??= second;
    this.buckets.set(second, Math.max(this.buckets.get(second) ?? 0, value));
    if (value > 0) this.lastTraffic = at;
    const oldest = second - this.spec.stableWindowMs;
    for (const k of this.buckets.keys()) if (k <= oldest) this.buckets.delete(k);
  }

  /** The average over the `windowMs` up to `now` (over the revision's age, when younger). */
  private average(now: number, windowMs: number): number {
    if (this.first === undefined) return 0;
    const end = Math.floor(now / 1000) * 1000;
    const start = Math.max(end - windowMs + 1000, this.first);
    let sum = 0;
    for (const [k, v] of this.buckets) if (k >= start && k <= end) sum += v;
    return sum / Math.max(1, (end - start) / 1000 + 1);
  }

  /** How many pods the revision wants at `now`, with `ready` of them ready and `current` asked for. */
  decide(now: number, ready: number, current: number): Decision {
    const s = this.spec;
    const stable = this.average(now, s.stableWindowMs);
    const panic = this.average(now, s.panicWindowMs);
    const readyCount = Math.max(1, ready);
    const maxUp = Math.ceil(s.maxScaleUpRate * readyCount);
    const maxDown = Math.floor(readyCount / s.maxScaleDownRate);
    const clamp = (n: number) => Math.min(Math.max(n, maxDown), maxUp);
    const wantStable = Math.ceil(stable / s.targetValue);
    const wantPanic = Math.ceil(panic / s.targetValue);
    const over = wantPanic / readyCount >= s.panicThreshold;
    if (over) this.panicSince = now;
    else if (this.panicSince !== undefined && now - this.panicSince >= s.stableWindowMs) {
      this.panicSince = undefined;
      this.maxPanicPods = 0;
    }
    let want: number;
    let reason: string;
    if (this.panicSince !== undefined) {
      want = Math.max(clamp(wantStable), clamp(wantPanic), this.maxPanicPods);
      this.maxPanicPods = want;
      reason = `panic: ${fmt(panic)} over the panic window, ${ready} ready`;
    } else {
      want = clamp(wantStable);
      reason = `stable: ${fmt(stable)} over the stable window, ${ready} ready`;
    }
    if (s.scaleDownDelayMs > 0) {
      this.recent = this.recent.filter((r) => now - r.at < s.scaleDownDelayMs);
      this.recent.push({ at: now, want });
      want = Math.max(...this.recent.map((r) => r.want));
    }
    if (want > 0 && current === 0 && want < s.activationScale) want = s.activationScale;
    const min = s.enableScaleToZero ? s.minScale : Math.max(1, s.minScale);
    let desired = Math.max(want, min);
    if (s.maxScale > 0) desired = Math.min(desired, s.maxScale);
    // Zero only once a whole stable window was seen idle, after the grace period of wanting zero,
    // and past the pod retention period.
    if (desired === 0 && current > 0 && this.first !== undefined && now - this.first < s.stableWindowMs) {
      desired = 1;
      reason = 'idle: a stable window not yet observed';
    } else if (desired === 0) {
      this.zeroSince ??= now;
      const graceLeft = this.zeroSince + s.scaleToZeroGracePeriodMs - now;
      const retentionLeft = this.lastTraffic + s.scaleToZeroPodRetentionMs - now;
      if (current > 0 && (graceLeft > 0 || retentionLeft > 0)) {
        desired = Math.min(current, 1);
        reason = `idle: scale to zero in ${Math.ceil(Math.max(graceLeft, retentionLeft) / 1000)}s`;
      } else reason = 'idle: no traffic over the stable window and the grace period';
    } else this.zeroSince = undefined;
    return { desired, stable, panic, panicking: this.panicSince !== undefined, excessBurstCapacity: excessBurstCapacity(s, ready, panic), reason };
  }
}

/** Knative's excess burst capacity of a revision with `ready` pods and `panic` the panic window's average. */
export function excessBurstCapacity(s: Pick<ScalingSpec, 'targetBurstCapacity' | 'totalValue'>, ready: number, panic: number): number {
  if (s.targetBurstCapacity === 0) return 0;
  if (s.targetBurstCapacity < 0) return -1;
  return Math.floor(ready * s.totalValue - s.targetBurstCapacity - panic);
}

const fmt = (n: number): string => (Math.round(n * 100) / 100).toString();
