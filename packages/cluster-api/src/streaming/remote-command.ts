/**
 * The remote-command protocols (exec and attach) as the kubelet serves them
 * (pkg/kubelet/cri/streaming/remotecommand), independent of the transport: which streams a request
 * asks for (the kubelet's `input`, `output`, `error`, `tty` query, "1" for yes), the status written
 * on the error stream when the command ends (a metav1.Status: Success, or Failure with reason
 * NonZeroExitCode and the exit code as an `ExitCode` cause), and terminal size events. The
 * transports are remote-command-websocket.ts (channels: `v5.channel.k8s.io`, `v4.channel.k8s.io`,
 * `v4.base64.channel.k8s.io`) and remote-command-spdy.ts (`v4.channel.k8s.io` streams).
 */
import type { Readable, Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { badRequest } from '../api/errors.js';

/** What the kubelet speaks over WebSocket, preferred first (kubectl 1.30+ asks for v5). */
export const RemoteCommandWebSocketProtocols = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'v4.base64.channel.k8s.io'] as const;
/** Over SPDY: v4 (kubectl offers v5 first and takes v4). */
export const RemoteCommandSpdyProtocols = ['v4.channel.k8s.io'] as const;

export interface RemoteCommandOptions {
  stdin: boolean;
  stdout: boolean;
  /** Never with `tty` (a terminal merges stderr into stdout). */
  stderr: boolean;
  tty: boolean;
}

export interface TerminalSize {
  width: number;
  height: number;
}

/** What a command is handed: the client's streams (the CRI's StreamOptions). */
export interface CommandStreams {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  tty: boolean;
  resize?: AsyncIterable<TerminalSize>;
}

/** Runs the command until it ends; resolves with its exit code (attach: with nothing when the container ends). */
export type CommandRunner = (streams: CommandStreams) => Promise<{ exitCode: number } | void>;

/** A failure whose message is meant for the client (it reaches the error stream as it is). */
export class RemoteCommandError extends Error {
  override readonly name = 'RemoteCommandError';
}

/** The kubelet's NewOptions: "1" means yes; stderr is dropped with a tty; at least one stream. */
export function remoteCommandOptions(query: URLSearchParams): RemoteCommandOptions {
  const yes = (name: string) => query.get(name) === '1';
  const tty = yes('tty');
  const options = { stdin: yes('input'), stdout: yes('output'), stderr: yes('error') && !tty, tty };
  if (!options.stdin && !options.stdout && !options.stderr) throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  return options;
}

/** The kubelet's query for these options (what the API server sends it). */
export function remoteCommandQuery(options: RemoteCommandOptions, command: readonly string[] = []): URLSearchParams {
  const q = new URLSearchParams();
  for (const c of command) q.append('command', c);
  if (options.stdin) q.set('input', '1');
  if (options.stdout) q.set('output', '1');
  if (options.stderr) q.set('error', '1');
  if (options.tty) q.set('tty', '1');
  return q;
}

export type CommandOutcome = { exitCode: number } | { error: string };

/** The v4 error stream's Status (writeErrorV4): Success, NonZeroExitCode with the code as a cause, or the failure's message. */
export function outcomeStatus(outcome: CommandOutcome, command: readonly string[] = []): Record<string, unknown> {
  if ('error' in outcome) return { metadata: {}, status: 'Failure', message: outcome.error };
  if (outcome.exitCode === 0) return { metadata: {}, status: 'Success' };
  const code = outcome.exitCode;
  const what = command.length ? `error executing command [${command.join(' ')}], exit code ${code}` : `exit code ${code}`;
  return {
    metadata: {}, status: 'Failure', message: `command terminated with non-zero exit code: ${what}`, reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** Runs the command and answers its outcome, after what it wrote reached the output streams' ends. */
export async function runCommand(run: CommandRunner, streams: CommandStreams, command: readonly string[]): Promise<Record<string, unknown>> {
  let outcome: CommandOutcome;
  try {
    const result = await run(streams);
    outcome = { exitCode: result?.exitCode ?? 0 };
  } catch (err) {
    outcome = { error: err instanceof RemoteCommandError ? err.message : 'error executing command in container' };
  }
  for (const out of [streams.stdout, streams.stderr]) {
    if (!out || out.destroyed) continue;
    if (!out.writableEnded) out.end();
    await finished(out, { readable: false }).catch(() => undefined);
  }
  return outcomeStatus(outcome, command);
}

/**
 * Terminal sizes as they arrive (`{"Width":…,"Height":…}` objects, one per WebSocket message or one
 * per line on the SPDY stream). A malformed one ends the events, as the kubelet stops reading them.
 */
export class ResizeEvents implements AsyncIterable<TerminalSize> {
  private readonly queue: TerminalSize[] = [];
  private waiting?: () => void;
  private ended = false;
  private partial = '';

  /** One JSON object; false (and the end of the events) when it is not a size. */
  push(text: string): boolean {
    if (this.ended) return false;
    let size: unknown;
    try {
      size = JSON.parse(text);
    } catch {
      size = undefined;
    }
    // Go's json decoding matches field names regardless of case: client-node sends {"height", "width"}.
    const field = (name: string) => {
      const fields = Object.entries(size ?? {});
      return (fields.find(([k]) => k === name) ?? fields.find(([k]) => k.toLowerCase() === name.toLowerCase()))?.[1];
    };
    const [Width, Height] = [field('Width'), field('Height')];
    const dim = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffff;
    if (typeof size !== 'object' || size === null || Array.isArray(size) || !dim(Width ?? 0) || !dim(Height ?? 0)) {
      this.end();
      return false;
    }
    this.queue.push({ width: (Width as number | undefined) ?? 0, height: (Height as number | undefined) ?? 0 });
    this.waiting?.();
    return true;
  }

  /** Bytes of a stream of objects separated by newlines (what json.Encoder writes). */
  pushChunk(chunk: Buffer): void {
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > 4096) return this.end();
    for (const line of lines) if (line.trim() && !this.push(line)) return;
  }

  end(): void {
    this.ended = true;
    this.waiting?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TerminalSize> {
    for (;;) {
      const next = this.queue.shift();
      if (next) {
        yield next;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }
}
