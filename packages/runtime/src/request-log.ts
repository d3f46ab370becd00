/**
 * `context.log`: the request's logger, as cheap as a field. pino's child() serialises its bindings
 * each time it is called, so the child that carries `reqId` is made only by the first call that
 * would print; at the default level a function's `context.log.info(…)` costs a level check.
 */
import type { IncomingMessage } from 'node:http';
import type { RuntimeLogger } from './logger.js';
import type { Logger } from './types.js';

type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/** What the logger needs from its request: the id, read only when a line is written. */
export interface LogSubject {
  readonly req: IncomingMessage;
  readonly reqId: string;
}

export class RequestLog implements Logger {
  readonly #root: RuntimeLogger;
  readonly #subject: LogSubject;
  #child: Logger | undefined = undefined;

  constructor(root: RuntimeLogger, subject: LogSubject) {
    this.#root = root;
    this.#subject = subject;
  }

  /** pino-http's request logger when it is attached (it carries the same reqId), else our child. */
  #target(): Logger {
    return (this.#child ??= (this.#subject.req as { log?: Logger }).log ?? (this.#root.child({ reqId: this.#subject.reqId }) as unknown as Logger));
  }

  #write(level: Level, args: unknown[]): void {
    if (this.#child === undefined && !this.#root.isLevelEnabled(level)) return;
    (this.#target()[level] as (...a: unknown[]) => void)(...args);
  }

  trace(...args: unknown[]): void { this.#write('trace', args); }
  debug(...args: unknown[]): void { this.#write('debug', args); }
  info(...args: unknown[]): void { this.#write('info', args); }
  warn(...args: unknown[]): void { this.#write('warn', args); }
  error(...args: unknown[]): void { this.#write('error', args); }
  fatal(...args: unknown[]): void { this.#write('fatal', args); }

  get level(): string {
    return (this.#child ?? this.#root).level;
  }
  /** Changes this request's level only, as pino's child allows. */
  set level(level: string) {
    this.#target().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#root).isLevelEnabled(level);
  }

  child(bindings: Record<string, unknown>): Logger {
    return this.#target().child(bindings);
  }

  /** JSON.stringify(context) shows the logger by its level, never its internals. */
  toJSON(): { level: string } {
    return { level: this.level };
  }
}
