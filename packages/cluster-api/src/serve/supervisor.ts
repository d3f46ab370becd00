/**
 * Runs an ordered list of parts: started in order, stopped in reverse. A part that fails — its start
 * throws, it reports a failure later (PartContext.failed), or an error nothing caught runs through its
 * code (stray) — is logged with its name; a restartable one is stopped and started again after a
 * backoff (1 s doubling to 60 s, reset once it has run a minute, as the kubelet's CrashLoopBackOff),
 * any other ends the process through `fatal` with one line naming it. Nothing a part does rejects
 * into the caller once start() has returned.
 */
import { messageOf, permanentFailure, runsThrough, type Part } from './part.js';

export interface SupervisorOptions {
  log?: (entry: Record<string, unknown>) => void;
  /** A part that cannot go on: the one-line reason; the caller stops the rest and exits non-zero. */
  fatal(message: string): void;
  /** First delay before a restart (default 1000 ms); doubles to `maxBackoffMs` (default 60 000). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * A part that fails its first start ends start(), restartable or not: a role command run alone
   * (`cluster-api node` with a kubeconfig it cannot use) says why and exits, as before it had parts.
   */
  firstStartFails?: boolean;
}

/**
 * A part that could not start and may not be retried; its message is the one line an operator reads,
 * its `code` the cause's (EADDRINUSE…), so callers tell failures apart as they did from the cause itself.
 */
export class PartError extends Error {
  override readonly name = 'PartError';
  readonly code?: string;
  constructor(readonly part: string, cause: unknown, during: 'start' | 'run') {
    super(`${part}: ${during === 'start' ? 'did not start' : 'failed'}: ${messageOf(cause)}`, { cause });
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === 'string') this.code = code;
  }
}

type State = 'stopped' | 'starting' | 'running' | 'waiting';

interface Entry {
  part: Part;
  state: State;
  failures: number;
  startedAt: number;
  timer?: NodeJS.Timeout;
}

const ResetAfterMs = 60_000;

export class Supervisor {
  private readonly entries: Entry[];
  private stopping = false;

  constructor(parts: readonly Part[], private readonly opts: SupervisorOptions) {
    const names = new Set<string>();
    for (const p of parts) {
      if (names.has(p.name)) throw new Error(`two parts named ${JSON.stringify(p.name)}`);
      names.add(p.name);
    }
    this.entries = parts.map((part) => ({ part, state: 'stopped', failures: 0, startedAt: 0 }));
  }

  /** Each part in order. A part that may not be retried and fails to start: the ones started are stopped, and this throws its PartError. */
  async start(): Promise<void> {
    for (const entry of this.entries) {
      const err = await this.startOne(entry);
      if (err === undefined) continue;
      if (this.opts.firstStartFails || !entry.part.restartable || permanentFailure(entry.part, err)) {
        await this.stop();
        throw new PartError(entry.part.name, err, 'start');
      }
      this.failed(entry, err, 'start');
    }
  }

  /** Each part in reverse; a stop that fails is logged and the others still stop. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const entry of [...this.entries].reverse()) {
      clearTimeout(entry.timer);
      entry.state = 'stopped';
      await entry.part.stop().catch((err: unknown) => this.opts.log?.({ level: 'error', msg: 'part did not stop cleanly', part: entry.part.name, error: messageOf(err) }));
    }
  }

  /** Which parts are doing their job. */
  ready(): Record<string, boolean> {
    return Object.fromEntries(this.entries.map((e) => [e.part.name, e.state === 'running' && e.part.ready()]));
  }

  /**
   * An error nothing caught (the process' unhandledRejection / uncaughtException): the part whose code
   * its stack runs through, if any, fails; else it is only logged. Returns the part's name, if known.
   */
  stray(err: unknown, what = 'uncaught error'): string | undefined {
    const stack = err instanceof Error ? (err.stack ?? '') : '';
    const entry = this.entries.find((e) => runsThrough(stack, e.part.source));
    this.opts.log?.({ level: 'error', msg: what, ...(entry && { part: entry.part.name }), error: messageOf(err), ...(stack && { stack }) });
    if (entry) this.failed(entry, err, 'run');
    return entry?.part.name;
  }

  private async startOne(entry: Entry): Promise<unknown> {
    entry.state = 'starting';
    try {
      await entry.part.start({ failed: (err) => this.failed(entry, err, 'run') });
      entry.state = 'running';
      entry.startedAt = Date.now();
      return undefined;
    } catch (err) {
      // What it opened before failing is released; a stop that fails too is only logged.
      await entry.part.stop().catch((e: unknown) => this.opts.log?.({ level: 'warn', msg: 'part did not stop cleanly after failing', part: entry.part.name, error: messageOf(e) }));
      entry.state = 'stopped';
      return err ?? new Error('start failed');
    }
  }

  private failed(entry: Entry, err: unknown, during: 'start' | 'run'): void {
    const { part } = entry;
    this.opts.log?.({ level: 'error', msg: during === 'start' ? 'part did not start' : 'part failed', part: part.name, error: messageOf(err) });
    if (this.stopping || entry.state === 'waiting' || entry.state === 'starting') return;
    if (!part.restartable || permanentFailure(part, err)) return this.opts.fatal(new PartError(part.name, err, during).message);
    if (entry.state === 'running' && Date.now() - entry.startedAt >= ResetAfterMs) entry.failures = 0;
    const delay = Math.min((this.opts.backoffMs ?? 1000) * 2 ** entry.failures, this.opts.maxBackoffMs ?? 60_000);
    entry.failures++;
    const wasRunning = entry.state === 'running';
    entry.state = 'waiting';
    this.opts.log?.({ level: 'info', msg: 'restarting part', part: part.name, inMs: delay });
    entry.timer = setTimeout(() => void this.restart(entry, wasRunning), delay);
    entry.timer.unref();
  }

  private async restart(entry: Entry, wasRunning: boolean): Promise<void> {
    if (this.stopping) return;
    if (wasRunning) await entry.part.stop().catch((e: unknown) => this.opts.log?.({ level: 'warn', msg: 'part did not stop cleanly before its restart', part: entry.part.name, error: messageOf(e) }));
    if (this.stopping) return;
    const err = await this.startOne(entry);
    if (err !== undefined) return this.failed(entry, err, 'start');
    // stop() ran meanwhile and passed it by: stop it now.
    if (this.stopping) return void (await entry.part.stop().catch(() => undefined));
    this.opts.log?.({ level: 'info', msg: 'part restarted', part: entry.part.name });
  }
}
