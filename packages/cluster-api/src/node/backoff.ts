/**
 * The kubelet's restart back-off (client-go flowcontrol.Backoff as kuberuntime uses it, no jitter):
 * per container, the first restart is immediate; each later exit waits the current delay, which
 * starts at 10 s and doubles to 5 min; an entry not touched for twice the maximum (a container that
 * ran 10 minutes) starts over. Also used for image pulls (ImagePullBackOff), as the kubelet does.
 */

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
}

export const CrashLoopBackoff: BackoffPolicy = { initialMs: 10_000, maxMs: 300_000 };

interface Entry {
  delayMs: number;
  lastUpdate: number;
  /** What failed last (the ImagePullBackOff message repeats it). */
  note?: string;
}

export class Backoff {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly policy: BackoffPolicy = CrashLoopBackoff, private readonly now: () => number = Date.now) {}

  private expired(eventTime: number, entry: Entry): boolean {
    return eventTime - entry.lastUpdate > this.policy.maxMs * 2;
  }

  /** Whether a container that exited at `eventTime` must still wait (IsInBackOffSince). */
  inBackoffSince(key: string, eventTime: number): boolean {
    const entry = this.entries.get(key);
    if (!entry || this.expired(eventTime, entry)) return false;
    return this.now() - eventTime < entry.delayMs;
  }

  /** When the wait for an exit at `eventTime` ends (ms since the epoch). */
  readyAt(key: string, eventTime: number): number {
    return eventTime + (this.entries.get(key)?.delayMs ?? 0);
  }

  /** The current delay, for the CrashLoopBackOff message. */
  delay(key: string): number {
    return this.entries.get(key)?.delayMs ?? 0;
  }

  /** A restart is happening now after an exit at `eventTime` (Next): the next wait doubles. */
  next(key: string, eventTime: number, note?: string): void {
    const entry = this.entries.get(key);
    if (!entry || this.expired(eventTime, entry)) this.entries.set(key, { delayMs: this.policy.initialMs, lastUpdate: this.now(), note });
    else this.entries.set(key, { delayMs: Math.min(entry.delayMs * 2, this.policy.maxMs), lastUpdate: this.now(), note });
  }

  /** Whether the last failure (`next`) is less than the current delay ago (IsInBackOffSinceUpdate: image pulls). */
  inBackoffSinceUpdate(key: string): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && this.now() - entry.lastUpdate < entry.delayMs;
  }

  /** When the wait after the last failure ends. */
  readyAfterUpdate(key: string): number {
    const entry = this.entries.get(key);
    return entry ? entry.lastUpdate + entry.delayMs : this.now();
  }

  note(key: string): string {
    return this.entries.get(key)?.note ?? '';
  }

  forget(prefix: string): void {
    for (const key of this.entries.keys()) if (key.startsWith(prefix)) this.entries.delete(key);
  }
}

/** A duration as Go's time.Duration.String prints whole seconds: `10s`, `1m20s`, `5m0s`. */
export function goDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h ? `${h}h` : ''}${m}m${s % 60}s`;
}
