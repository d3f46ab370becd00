/**
 * A SPDY/3 client for tests, speaking frames by hand over any byte stream (a socket after a 101, a
 * WebSocket tunnel): it opens streams as kubectl does, and keeps every frame the server sends, so a
 * test can wait for one and assert on it. Built on the same codec it tests only where the codec has
 * independent checks (frames.test.ts, headers.test.ts against zlib's own streams).
 */
import type { Duplex } from 'node:stream';
import { FlagFin, FrameDecoder, encodeFrame, type Frame } from '../spdy/frames.js';
import { HeaderCompressor, HeaderDecompressor, type SpdyHeaders } from '../spdy/headers.js';

export type Received = Frame & { headers?: SpdyHeaders };

export class SpdyTestClient {
  readonly frames: Received[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly deflate = new HeaderCompressor();
  private readonly inflate = new HeaderDecompressor(1 << 20);
  private nextStream = 1;
  private nextPing = 1;
  closed = false;

  constructor(readonly transport: Duplex) {
    const decoder = new FrameDecoder({ maxControlFrame: 1 << 24 }, (frame) => this.keep(frame));
    transport.on('data', (chunk: Buffer) => decoder.push(chunk));
    // A peer ends its side when the server ends its own, as spdystream does on EOF.
    transport.on('end', () => transport.end());
    transport.on('close', () => ((this.closed = true), this.wake()));
    transport.on('error', () => undefined);
  }

  private keep(frame: Frame): void {
    const received: Received = frame;
    if (frame.type === 'syn_reply' || frame.type === 'syn_stream' || frame.type === 'headers') received.headers = this.inflate.decompress(frame.headerBlock);
    this.frames.push(received);
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Opens a stream (SYN_STREAM); answers its id. */
  open(headers: Record<string, string>, fin = false): number {
    const streamId = this.nextStream;
    this.nextStream += 2;
    this.write(encodeFrame({ type: 'syn_stream', streamId, associatedId: 0, priority: 0, slot: 0, flags: fin ? FlagFin : 0, headerBlock: this.deflate.compress(headers) }));
    return streamId;
  }

  /** A port-forward pair as kubectl opens it: error stream, then data stream. */
  openPair(port: number | string, requestId: string | number): { error: number; data: number } {
    const error = this.open({ streamtype: 'error', port: String(port), requestid: String(requestId) });
    const data = this.open({ streamtype: 'data', port: String(port), requestid: String(requestId) });
    return { error, data };
  }

  data(streamId: number, data: Buffer | string, fin = false): void {
    this.write(encodeFrame({ type: 'data', streamId, fin, data: Buffer.from(data) }));
  }

  ping(): number {
    const id = this.nextPing;
    this.nextPing += 2;
    this.write(encodeFrame({ type: 'ping', id }));
    return id;
  }

  write(bytes: Buffer): void {
    this.transport.write(bytes);
  }

  /** The first frame (from `from` on) matching, waiting up to `ms` for it. */
  async next(match: (f: Received) => boolean, ms = 5000, from = 0): Promise<Received> {
    const found = () => this.frames.slice(from).find(match);
    const deadline = Date.now() + ms;
    for (;;) {
      const f = found();
      if (f) return f;
      if (this.closed) throw new Error(`connection closed; frames: ${this.describe()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${ms} ms; frames: ${this.describe()}`);
      await new Promise<void>((resolve) => {
        const wake = () => (this.waiters.delete(wake), clearTimeout(timer), resolve());
        const timer = setTimeout(wake, left);
        this.waiters.add(wake);
      });
    }
  }

  /** Waits for the connection to close. */
  async closedWithin(ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('connection still open');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Everything the server sent on a stream, until its FIN. */
  async readStream(streamId: number, ms = 5000): Promise<Buffer> {
    await this.next((f) => f.type === 'data' && f.streamId === streamId && f.fin, ms);
    return Buffer.concat(this.frames.filter((f): f is Extract<Frame, { type: 'data' }> => f.type === 'data' && f.streamId === streamId).map((f) => f.data));
  }

  describe(): string {
    return this.frames.map((f) => `${f.type}${'streamId' in f ? `#${f.streamId}` : ''}`).join(' ');
  }

  close(): void {
    this.transport.destroy();
  }
}
