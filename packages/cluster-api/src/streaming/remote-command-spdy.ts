/**
 * exec and attach over SPDY/3.1 (`v4.channel.k8s.io`), kubectl's fallback when the WebSocket upgrade
 * fails (and its only way before 1.30), as the kubelet serves it (remotecommand/httpstream.go): the
 * client opens one stream per `streamType` header (error, stdin, stdout, stderr, resize); once every
 * stream the options ask for is there (30 s at most) the command runs, stdin read until the client's
 * FIN, stdout and stderr ended with FIN, sizes read as newline-separated JSON from the resize stream,
 * and the Status written on the error stream before the connection closes.
 */
import type { Duplex } from 'node:stream';
import { SpdySession } from './spdy/session.js';
import type { SpdyStream } from './spdy/stream.js';
import { ResizeEvents, runCommand, type CommandRunner, type RemoteCommandOptions } from './remote-command.js';

type StreamType = 'error' | 'stdin' | 'stdout' | 'stderr' | 'resize';
const Types: readonly StreamType[] = ['error', 'stdin', 'stdout', 'stderr', 'resize'];

export interface SpdyCommandOptions {
  /** How long the client may take to open its streams (the kubelet's 30 s). */
  streamCreationTimeoutMs?: number;
}

/** Serves one command on an upgraded SPDY connection; resolves once the connection is gone. */
export function serveSpdyCommand(transport: Duplex, options: RemoteCommandOptions, run: CommandRunner, command: readonly string[] = [], spdy: SpdyCommandOptions = {}): Promise<void> {
  const expected: StreamType[] = ['error'];
  if (options.stdin) expected.push('stdin');
  if (options.stdout) expected.push('stdout');
  if (options.stderr) expected.push('stderr');
  if (options.tty) expected.push('resize');
  const streams = new Map<StreamType, SpdyStream>();
  let started = false;
  const session = new SpdySession(transport, {
    idleTimeoutMs: 4 * 60 * 60 * 1000,
    onStream(stream) {
      const type = stream.header('streamtype') as StreamType;
      if (started || !Types.includes(type) || streams.has(type)) return stream.reject();
      stream.accept();
      streams.set(type, stream);
      if (expected.every((t) => streams.has(t))) {
        started = true;
        clearTimeout(timer);
        void serve(session, streams, options, run, command);
      }
    },
  });
  // The client never opened what it asked for: the kubelet gives up on the connection.
  const timer = setTimeout(() => session.close(), spdy.streamCreationTimeoutMs ?? 30_000).unref();
  return session.done.then(() => clearTimeout(timer));
}

async function serve(session: SpdySession, streams: Map<StreamType, SpdyStream>, options: RemoteCommandOptions, run: CommandRunner, command: readonly string[]): Promise<void> {
  const error = streams.get('error')!;
  // kubectl half-closes the error stream at once; reading it lets that end arrive.
  error.resume();
  let resize: ResizeEvents | undefined;
  const resizeStream = streams.get('resize');
  if (resizeStream) {
    resize = new ResizeEvents();
    resizeStream.on('data', (chunk: Buffer) => resize!.pushChunk(chunk)).once('end', () => resize!.end()).once('close', () => resize!.end());
  }
  for (const s of streams.values()) s.on('error', () => undefined);
  const stdin = options.stdin ? streams.get('stdin') : undefined;
  // Streams the options did not ask for (stderr with a tty) are read and ended, never written.
  for (const [type, s] of streams) if (type !== 'error' && type !== 'resize' && s !== stdin && !(type === 'stdout' && options.stdout) && !(type === 'stderr' && options.stderr)) s.resume().end();
  const status = await runCommand(run, {
    stdin, stdout: options.stdout ? streams.get('stdout') : undefined, stderr: options.stderr ? streams.get('stderr') : undefined, tty: options.tty, resize,
  }, command);
  resize?.end();
  error.end(JSON.stringify(status), () => session.close());
}
