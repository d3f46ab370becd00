/**
 * A container's log file in the CRI format the kubelet reads (`<RFC3339Nano> stdout|stderr F|P
 * <text>`), written as the process writes, rotated by size as the kubelet's container log manager
 * rotates (`--container-log-max-size`, `--container-log-max-files`): the current file is renamed to
 * `<file>.<YYYYMMDD-hhmmss>` and only the newest rotated files are kept. Followers (`kubectl logs -f`)
 * are told when bytes land, when the file rotates and when the container ends.
 */
import { EventEmitter } from 'node:events';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface LogLimits {
  /** Bytes after which the file rotates (kubelet default 10 MiB). */
  maxBytes: number;
  /** Files kept per container, the current one included (kubelet default 5). */
  maxFiles: number;
}

export const DefaultLogLimits: LogLimits = { maxBytes: 10 * 1024 * 1024, maxFiles: 5 };

/** containerd's maximum line length before it writes a partial (`P`) line. */
const MaxLine = 16 * 1024;

const epochNs = BigInt(Date.now()) * 1_000_000n - process.hrtime.bigint();

/** Now as RFC 3339 with nine fraction digits (the kubelet's RFC3339NanoFixed). */
export function nanoTimestamp(): string {
  const ns = epochNs + process.hrtime.bigint();
  const iso = new Date(Number(ns / 1_000_000n)).toISOString();
  return `${iso.slice(0, 19)}.${(ns % 1_000_000_000n).toString().padStart(9, '0')}Z`;
}

const rotationSuffix = (d = new Date()): string => d.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

/** The name a log file is renamed to when it rotates now. */
export const rotatedName = (path: string): string => `${path}.${rotationSuffix()}`;

/** Keeps the newest `maxFiles - 1` rotated files of `path` (names sort by time). */
export function pruneRotated(path: string, maxFiles: number): void {
  const prefix = `${basename(path)}.`;
  const dir = dirname(path);
  const rotated = readdirSync(dir).filter((f) => f.startsWith(prefix)).sort();
  for (const f of rotated.slice(0, Math.max(0, rotated.length - (maxFiles - 1)))) rmSync(join(dir, f), { force: true });
}

type Stream = 'stdout' | 'stderr';

export interface ContainerLogEvents {
  /** Bytes were appended to the current file. */
  write: [];
  /** The current file was renamed away; a new one starts at `path`. */
  rotate: [];
  /** No more writes: the process ended. */
  close: [];
}

/** A log being written, as a reader follows it: its events, and whether it is done. */
export interface LiveLog {
  readonly closed: boolean;
  on<E extends keyof ContainerLogEvents>(event: E, listener: () => void): unknown;
  off<E extends keyof ContainerLogEvents>(event: E, listener: () => void): unknown;
}

export class ContainerLog extends EventEmitter<ContainerLogEvents> implements LiveLog {
  private fd: number;
  private size: number;
  private readonly pending: Record<Stream, string> = { stdout: '', stderr: '' };
  closed = false;

  constructor(readonly path: string, private readonly limits: LogLimits = DefaultLogLimits) {
    super();
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a', 0o640);
    this.size = fstatSync(this.fd).size;
  }

  /** Output of the process, split into CRI lines (the unfinished tail waits for its newline). */
  write(stream: Stream, chunk: Buffer | string): void {
    if (this.closed) return;
    let text = this.pending[stream] + chunk.toString();
    let out = '';
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
      let line = text.slice(0, nl);
      for (; line.length > MaxLine; line = line.slice(MaxLine)) out += this.lines(stream, line.slice(0, MaxLine), 'P');
      out += this.lines(stream, line, 'F');
      text = text.slice(nl + 1);
    }
    while (text.length > MaxLine) {
      out += this.lines(stream, text.slice(0, MaxLine), 'P');
      text = text.slice(MaxLine);
    }
    this.pending[stream] = text;
    if (out) this.append(out);
  }

  /** One CRI line; a CR before the newline (CRLF output) is not part of the text, as containerd reads it. */
  private lines(stream: Stream, text: string, tag: 'F' | 'P'): string {
    return `${nanoTimestamp()} ${stream} ${tag} ${text.endsWith('\r') ? text.slice(0, -1) : text}\n`;
  }

  private append(out: string): void {
    const bytes = Buffer.from(out);
    writeSync(this.fd, bytes);
    this.size += bytes.length;
    this.emit('write');
    if (this.size >= this.limits.maxBytes) this.rotate();
  }

  private rotate(): void {
    closeSync(this.fd);
    renameSync(this.path, rotatedName(this.path));
    this.fd = openSync(this.path, 'a', 0o640);
    this.size = 0;
    pruneRotated(this.path, this.limits.maxFiles);
    this.emit('rotate');
  }

  /** The process ended: what it wrote without a final newline is a full line, as containerd writes it. */
  close(): void {
    if (this.closed) return;
    let out = '';
    for (const stream of ['stdout', 'stderr'] as const) if (this.pending[stream]) out += this.lines(stream, this.pending[stream], 'F');
    if (out) this.append(out);
    this.closed = true;
    closeSync(this.fd);
    this.emit('close');
  }
}
