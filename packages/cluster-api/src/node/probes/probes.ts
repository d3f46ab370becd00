/**
 * A container's probe workers, with the kubelet's semantics (pkg/kubelet/prober/worker.go): each
 * probe runs every `periodSeconds` (default 10) once `initialDelaySeconds` have passed since the
 * container started, each try bounded by `timeoutSeconds` (default 1); a result replaces the last
 * one only after `failureThreshold` (default 3) failures or `successThreshold` (default 1) successes
 * in a row. Readiness starts failed, liveness succeeded, startup unknown; until the startup probe
 * succeeds the other two do not run. Every failed try is an `Unhealthy` event.
 */
import type { ProbeOutcome } from './probe-check.js';
import type { Probe } from '../types.js';

export type ProbeKind = 'Liveness' | 'Readiness' | 'Startup';
export type ProbeResult = 'success' | 'failure' | 'unknown';

export interface ProbeHooks {
  /** One try against the container. */
  check(probe: Probe, timeoutMs: number): Promise<ProbeOutcome>;
  /** Resolves once the probed port takes connections (or the time given is over). */
  listening?(probe: Probe, withinMs: number): Promise<void>;
  /** The worker's result changed (after its threshold). */
  changed(kind: ProbeKind, result: ProbeResult): void;
  /** A try failed: the kubelet's Unhealthy event. */
  failed(kind: ProbeKind, output: string): void;
}

const initialResult: Record<ProbeKind, ProbeResult> = { Liveness: 'success', Readiness: 'failure', Startup: 'unknown' };

export class ProbeWorker {
  result: ProbeResult;
  private last: ProbeResult = 'unknown';
  private run = 0;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(readonly kind: ProbeKind, private readonly probe: Probe, private readonly hooks: ProbeHooks, private readonly startedAt: number, private readonly gate: () => boolean) {
    this.result = initialResult[kind];
  }

  private get periodMs(): number {
    return Math.max(1, this.probe.periodSeconds ?? 10) * 1000;
  }

  /**
   * The first try waits (at most one period) for the probed port to take connections: a process
   * needs a moment to listen, and a try before that would fail and leave the pod unready for a whole
   * period. Thresholds and periods are the kubelet's from then on.
   */
  start(): void {
    const delay = Math.max(0, this.startedAt + (this.probe.initialDelaySeconds ?? 0) * 1000 - Date.now());
    const listening = this.hooks.listening;
    if (!listening || this.kind === 'Liveness') return this.schedule(delay);
    this.timer = setTimeout(() => void listening(this.probe, this.periodMs).then(() => this.schedule(0)), delay);
    this.timer.unref();
  }

  /** Probe now (the kubelet's manual trigger, e.g. when the startup probe has just succeeded). */
  trigger(): void {
    if (this.stopped) return;
    const due = this.startedAt + (this.probe.initialDelaySeconds ?? 0) * 1000 - Date.now();
    this.schedule(Math.max(0, due));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    // Liveness and readiness wait for the startup probe; their results stay as they are meanwhile.
    if (this.gate()) {
      const outcome = await this.hooks.check(this.probe, Math.max(1, this.probe.timeoutSeconds ?? 1) * 1000);
      if (this.stopped) return;
      if (!outcome.ok) this.hooks.failed(this.kind, outcome.output);
      this.record(outcome.ok ? 'success' : 'failure');
    }
    // A startup probe that succeeded is done, as the kubelet's worker stops probing it.
    if (this.kind === 'Startup' && this.result === 'success') return;
    this.schedule(this.periodMs);
  }

  private record(result: ProbeResult): void {
    this.run = result === this.last ? this.run + 1 : 1;
    this.last = result;
    const needed = result === 'failure' ? (this.probe.failureThreshold ?? 3) : (this.probe.successThreshold ?? 1);
    if (this.run < needed || result === this.result) return;
    this.result = result;
    // A liveness or startup failure restarts the container: the next instance starts counting afresh.
    if (result === 'failure' && this.kind !== 'Readiness') this.run = 0;
    this.hooks.changed(this.kind, result);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
