/**
 * A part of `cluster-api serve` (ARCHITECTURE.md's local stack: api-server, controller-manager,
 * scheduler, node, broker, …): what the supervisor starts in order, stops in reverse, and restarts or
 * gives up on when it fails. A role command (`cluster-api node`, `scheduler`, `broker`) is one part
 * run alone under the same supervisor.
 */
import { fileURLToPath } from 'node:url';

export interface PartContext {
  /** A failure after start (a loop that died, a server that errored): logged with the part's name, then handled as a failed start. */
  failed(err: unknown): void;
}

export interface Part {
  /** As `--disable` names it. */
  readonly name: string;
  start(ctx: PartContext): Promise<void>;
  /** Stops what start started; called for a part whose start failed too, so it releases what it opened. */
  stop(): Promise<void>;
  /** Whether it is doing its job now. */
  ready(): boolean;
  /** A failure of a restartable part is retried with backoff; any other ends the process. */
  readonly restartable: boolean;
  /**
   * A failure retrying cannot mend (its port is in use: the operator must change a flag): ends the
   * process whatever `restartable` says. Default: errors with code EADDRINUSE, EACCES or EADDRNOTAVAIL.
   */
  permanent?(err: unknown): boolean;
  /** The URL of the folder holding its code (`new URL('../node/', import.meta.url)`): an error nothing caught whose stack runs through it is this part's. */
  readonly source?: URL;
}

/** Whether a stack runs through a part's code (ES modules' frames name file: URLs, others paths). */
export const runsThrough = (stack: string, source: URL | undefined): boolean =>
  source !== undefined && (stack.includes(source.href) || stack.includes(fileURLToPath(source)));

const PermanentCodes = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL']);

export const permanentFailure = (part: Part, err: unknown): boolean =>
  part.permanent ? part.permanent(err) : PermanentCodes.has(String((err as NodeJS.ErrnoException | undefined)?.code));

export const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Something started that stops (a NodeAgent, a Scheduler, a broker, the API server). */
export interface Running {
  stop(): Promise<void>;
}

/** A part made of a start that returns what it started; restartable unless said otherwise. */
export function part(name: string, start: (ctx: PartContext) => Promise<Running>, o: Pick<Part, 'source' | 'permanent'> & { restartable?: boolean } = {}): Part {
  let running: Running | undefined;
  return {
    name,
    restartable: o.restartable ?? true,
    ...(o.source !== undefined && { source: o.source }),
    ...(o.permanent && { permanent: o.permanent }),
    async start(ctx) {
      running = await start(ctx);
    },
    async stop() {
      const was = running;
      running = undefined;
      await was?.stop();
    },
    ready: () => running !== undefined,
  };
}
