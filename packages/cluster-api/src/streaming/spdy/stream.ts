/**
 * One SPDY stream as a Node Duplex, so it pipes like a socket: what the peer sends is read, what is
 * written leaves as DATA frames, `end()` sends FIN (a half-close, as spdystream's Close), `destroy()`
 * before both sides finished sends RST_STREAM (CANCEL, as spdystream's Reset). A RST from the peer
 * destroys it with `resetByPeer` set. Memory is bounded by the readable high-water mark: past it the
 * session stops reading the connection until this stream is read again.
 */
import { Duplex } from 'node:stream';
import { RstStatus } from './frames.js';
import type { SpdyHeaders } from './headers.js';

/** What a stream needs of its session (session.ts). */
export interface StreamOwner {
  writeData(id: number, chunk: Buffer, fin: boolean, done: (err?: Error | null) => void): void;
  reply(stream: SpdyStream): void;
  reset(stream: SpdyStream, status: number): void;
  /** The stream's reader is ready for more: the connection may be read again. */
  unblock(stream: SpdyStream): void;
  /** The reader is full: stop reading the connection until `unblock`. */
  block(stream: SpdyStream): void;
  forget(stream: SpdyStream): void;
}

export class SpdyStream extends Duplex {
  /** Set when the peer ended this stream with RST_STREAM. */
  resetByPeer = false;
  private decided = false;
  private resetSent = false;

  constructor(
    private readonly owner: StreamOwner,
    readonly id: number,
    readonly headers: SpdyHeaders,
    highWaterMark: number,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: highWaterMark, writableHighWaterMark: highWaterMark });
  }

  /** The first value of a header (names are lowercase in SPDY). */
  header(name: string): string | undefined {
    return this.headers.get(name)?.[0];
  }

  /** Accept the stream: SYN_REPLY with no headers, as the kubelet answers. */
  accept(): void {
    if (this.decided) return;
    this.decided = true;
    this.owner.reply(this);
  }

  /** Refuse the stream before it starts: RST_STREAM (spdystream's Reset sends CANCEL). */
  reject(): void {
    if (this.decided) return;
    this.decided = true;
    this.destroy();
  }

  /** A DATA frame piece from the peer. */
  receive(data: Buffer, fin: boolean): void {
    if (this.readableEnded || this.destroyed) return;
    if (data.length > 0 && !this.push(data)) this.owner.block(this);
    if (fin) this.push(null);
  }

  /** RST_STREAM from the peer: gone at once, in both directions. */
  peerReset(): void {
    this.resetByPeer = true;
    this.destroy();
  }

  override _read(): void {
    this.owner.unblock(this);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.owner.writeData(this.id, chunk, false, done);
  }

  override _final(done: (err?: Error | null) => void): void {
    this.owner.writeData(this.id, Buffer.alloc(0), true, done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    // Both FINs exchanged is a clean close; anything else tells the peer to drop the stream.
    const clean = this.writableFinished && this.readableEnded;
    if (!clean && !this.resetByPeer && !this.resetSent) {
      this.resetSent = true;
      this.owner.reset(this, RstStatus.Cancel);
    }
    this.owner.forget(this);
    done(err);
  }
}
