/**
 * `kubectl logs` from a CRI log file, as the kubelet's ReadLogs serves it: only the current file
 * (rotated ones are not read), `tailLines` counted from the end, lines older than `sinceTime`
 * skipped, `timestamps` prefixing each line with its RFC 3339 nanosecond time, partial (`P`) lines
 * joined to the next, output cut at exactly `limitBytes`, and `follow` waiting for more until the
 * container ends, across rotations.
 */
import { open, type FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { LiveLog } from './logs.js';

export interface LogReadOptions {
  tailLines?: number;
  /** ms since the epoch. */
  sinceTime?: number;
  timestamps?: boolean;
  limitBytes?: number;
  follow?: boolean;
  /** Only the lines of this stream (PodLogOptions' `stream`, KEP-3288); default both, in the order written. */
  stream?: 'stdout' | 'stderr';
  signal?: AbortSignal;
  /** Called once the starting point is fixed (and, following, changes are watched): what is written after it is read. */
  started?: () => void;
}

/** Where output goes: stops the read when the byte limit is reached. */
class LimitedOutput {
  written = 0;
  constructor(private readonly out: Writable, private readonly limit = Infinity) {}

  get full(): boolean {
    return this.written >= this.limit;
  }

  async write(text: string): Promise<void> {
    let bytes = Buffer.from(text);
    if (this.written + bytes.length > this.limit) bytes = bytes.subarray(0, this.limit - this.written);
    this.written += bytes.length;
    if (!this.out.write(bytes)) await new Promise<void>((resolve) => {
      const done = () => (this.out.off('drain', done), this.out.off('close', done), resolve());
      this.out.on('drain', done).on('close', done);
    });
  }
}

/** The byte offset where the last `n` lines start (whole file when it has fewer). */
async function tailOffset(fh: FileHandle, n: number): Promise<number> {
  const { size } = await fh.stat();
  if (n <= 0) return size;
  const buf = Buffer.alloc(size);
  await fh.read(buf, 0, size, 0);
  let end = size;
  if (buf[end - 1] === 0x0a) end--;
  for (let seen = 0, i = end - 1; i >= 0; i--) if (buf[i] === 0x0a && ++seen === n) return i + 1;
  return 0;
}

/** One CRI line as the client sees it, or undefined when it is skipped. */
function render(line: string, opts: LogReadOptions): string | undefined {
  const s1 = line.indexOf(' ');
  const s2 = line.indexOf(' ', s1 + 1);
  const s3 = line.indexOf(' ', s2 + 1);
  if (s1 < 0 || s2 < 0) return undefined;
  const time = line.slice(0, s1);
  if (opts.stream && line.slice(s1 + 1, s2) !== opts.stream) return undefined;
  if (opts.sinceTime !== undefined && Date.parse(time) < opts.sinceTime) return undefined;
  const tag = s3 < 0 ? line.slice(s2 + 1) : line.slice(s2 + 1, s3);
  const text = s3 < 0 ? '' : line.slice(s3 + 1);
  return `${opts.timestamps ? `${time} ` : ''}${text}${tag === 'P' ? '' : '\n'}`;
}

/** What happened to a live log since the last look; kept until looked at, so nothing between a read and a wait is lost. */
interface Seen {
  rotated: boolean;
  closed: boolean;
  aborted: boolean;
}

function changes(live: LiveLog, signal?: AbortSignal) {
  const seen: Seen & { wrote: boolean } = { rotated: false, closed: live.closed, aborted: false, wrote: false };
  let wake: (() => void) | undefined;
  const handlers = {
    write: () => ((seen.wrote = true), wake?.()),
    rotate: () => ((seen.rotated = true), wake?.()),
    close: () => ((seen.closed = true), wake?.()),
  };
  for (const [e, h] of Object.entries(handlers)) live.on(e as 'write', h);
  const abort = () => ((seen.aborted = true), wake?.());
  signal?.addEventListener('abort', abort);
  if (signal?.aborted) seen.aborted = true;
  return {
    async next(): Promise<Seen> {
      if (!seen.wrote && !seen.rotated && !seen.closed && !seen.aborted) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const now = { rotated: seen.rotated, closed: seen.closed, aborted: seen.aborted };
      seen.wrote = seen.rotated = false;
      return now;
    },
    dispose(): void {
      for (const [e, h] of Object.entries(handlers)) live.off(e as 'write', h);
      signal?.removeEventListener('abort', abort);
    },
  };
}

export async function readContainerLog(path: string, opts: LogReadOptions, out: Writable, live?: LiveLog): Promise<void> {
  const output = new LimitedOutput(out, opts.limitBytes);
  const following = opts.follow && live && !live.closed ? changes(live, opts.signal) : undefined;
  let fh = await open(path, 'r').catch(() => undefined);
  try {
    let offset = fh && opts.tailLines !== undefined && opts.tailLines >= 0 ? await tailOffset(fh, opts.tailLines) : 0;
    opts.started?.();
    for (;;) {
      if (fh) offset = await drain(fh, offset, opts, output);
      if (output.full || !following) return;
      const seen = await following.next();
      if (seen.aborted) return;
      if (seen.rotated || !fh) {
        // What the old file still holds first, then the new file from its start.
        if (fh) await drain(fh, offset, opts, output), await fh.close();
        fh = await open(path, 'r').catch(() => undefined);
        offset = 0;
      }
      if (seen.closed) {
        if (fh) await drain(fh, offset, opts, output);
        return;
      }
    }
  } finally {
    following?.dispose();
    await fh?.close();
  }
}

/** Renders whole lines from `offset` to the end of the file; returns where the next read starts (a line still being written is read again). */
async function drain(fh: FileHandle, offset: number, opts: LogReadOptions, output: LimitedOutput): Promise<number> {
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, buf.length, offset);
    if (bytesRead === 0) return offset;
    let start = 0;
    // Lines are split on bytes, so a multi-byte character is never cut between two reads.
    for (let nl = buf.indexOf(0x0a, 0); nl >= 0 && nl < bytesRead; nl = buf.indexOf(0x0a, start)) {
      const text = render(buf.toString('utf8', start, nl), opts);
      start = nl + 1;
      if (text !== undefined) await output.write(text);
      if (output.full) return offset + start;
    }
    if (start === 0 && bytesRead === buf.length) throw new Error(`log line longer than ${buf.length} bytes`);
    if (start === 0) return offset;
    offset += start;
  }
}
