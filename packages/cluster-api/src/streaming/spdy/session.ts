/**
 * The server side of a SPDY/3.1 connection as Go's spdystream runs it (kubectl's peer in
 * port-forward): the client opens streams (odd ids, increasing), the server answers each with
 * SYN_REPLY or RST_STREAM, PINGs from the client are echoed, GOAWAY stops new streams. spdystream
 * keeps no flow-control windows (it ignores SETTINGS and WINDOW_UPDATE), so neither does this side:
 * backpressure is the connection's own. When a stream's reader is full the session stops reading
 * the connection (as spdystream's frame workers block); when the connection's writer is full,
 * stream writes wait for it to drain. Memory per connection is bounded by the stream count times
 * each stream's high-water mark. Everything runs synchronously in the tick bytes arrive.
 */
import type { Duplex } from 'node:stream';
import { FlagFin, FrameDecoder, GoAwayStatus, RstStatus, SpdyProtocolError, dataFrameHeader, encodeFrame, type Frame } from './frames.js';
import { HeaderCompressor, HeaderDecompressor } from './headers.js';
import { SpdyStream, type StreamOwner } from './stream.js';

export interface SessionOptions {
  /** A stream the peer opened: call `accept()` or `reject()` before returning (undecided streams are refused). */
  onStream(stream: SpdyStream): void;
  /** Largest control frame accepted (they are held whole); default 64 KiB. */
  maxControlFrame?: number;
  /** Largest decompressed header block; default 64 KiB. */
  maxHeaderBytes?: number;
  /** Streams open at once; more are refused (RST_STREAM REFUSED_STREAM). Default 1024. */
  maxStreams?: number;
  /** Per-stream buffer in each direction; default 16 KiB. */
  streamHighWaterMark?: number;
  /** No frame in either direction for this long ends the connection (the kubelet's default is 4 h); 0: never. */
  idleTimeoutMs?: number;
}

/** DATA frames are cut to this size (spdystream's readers hold a whole frame). */
const MaxDataPayload = 32 * 1024;

export class SpdySession implements StreamOwner {
  private readonly streams = new Map<number, SpdyStream>();
  private readonly blocked = new Set<SpdyStream>();
  private readonly decoder: FrameDecoder;
  private readonly inflate: HeaderDecompressor;
  private readonly deflate = new HeaderCompressor();
  private readonly drainWaiters: (() => void)[] = [];
  private readonly idle: NodeJS.Timeout | undefined;
  private lastPeerStream = 0;
  private lastInvalid = 0;
  private goingAway = false;
  private closed = false;
  /** Resolves once the connection is gone and every stream with it. */
  readonly done: Promise<void>;

  constructor(
    private readonly transport: Duplex,
    private readonly options: SessionOptions,
  ) {
    this.decoder = new FrameDecoder({ maxControlFrame: options.maxControlFrame ?? 64 * 1024 }, (f) => this.handle(f));
    this.inflate = new HeaderDecompressor(options.maxHeaderBytes ?? 64 * 1024);
    this.done = new Promise((resolve) => transport.once('close', () => (this.teardown(), resolve())));
    transport.on('data', (chunk: Buffer) => this.receive(chunk));
    transport.on('drain', () => this.drainWaiters.splice(0).forEach((w) => w()));
    transport.on('end', () => this.close(GoAwayStatus.Ok));
    transport.on('error', () => transport.destroy());
    const idleMs = options.idleTimeoutMs ?? 0;
    if (idleMs > 0) this.idle = setTimeout(() => this.close(GoAwayStatus.Ok), idleMs).unref();
  }

  get openStreams(): number {
    return this.streams.size;
  }

  private receive(chunk: Buffer): void {
    this.idle?.refresh();
    try {
      this.decoder.push(chunk);
    } catch (err) {
      // A malformed frame (or a header block this side cannot follow) leaves the connection unusable.
      this.close(err instanceof SpdyProtocolError ? GoAwayStatus.ProtocolError : GoAwayStatus.InternalError);
    }
  }

  private handle(frame: Frame): void {
    if (this.closed) return;
    switch (frame.type) {
      case 'data':
        return this.data(frame);
      case 'syn_stream':
        return this.open(frame);
      case 'syn_reply':
      case 'headers':
        // Never asked for here, but the block still advances the peer's compression context.
        return void this.inflate.decompress(frame.headerBlock);
      case 'rst_stream':
        return this.streams.get(frame.streamId)?.peerReset();
      case 'ping':
        // Odd ids are the client's own pings: echo them (spdystream answers pings of the other parity).
        if (frame.id % 2 === 1) this.send(encodeFrame(frame));
        return;
      case 'goaway':
        this.goingAway = true;
        if (this.streams.size === 0) this.close(GoAwayStatus.Ok);
        return;
      default:
        // SETTINGS and WINDOW_UPDATE: spdystream neither keeps windows nor reads settings.
        return;
    }
  }

  /**
   * DATA for a stream the client never opened is a stream error (INVALID_STREAM), told once per
   * stream; DATA for one already gone (reset while frames were in flight) is dropped, as spdystream does.
   */
  private data(frame: Extract<Frame, { type: 'data' }>): void {
    const stream = this.streams.get(frame.streamId);
    if (stream) return stream.receive(frame.data, frame.fin);
    const neverOpened = frame.streamId % 2 === 0 || frame.streamId > this.lastPeerStream;
    if (!neverOpened || frame.streamId === this.lastInvalid) return;
    this.lastInvalid = frame.streamId;
    this.send(encodeFrame({ type: 'rst_stream', streamId: frame.streamId, status: RstStatus.InvalidStream }));
  }

  private open(frame: Extract<Frame, { type: 'syn_stream' }>): void {
    const headers = this.inflate.decompress(frame.headerBlock);
    const { streamId } = frame;
    if (streamId % 2 === 0 || streamId <= this.lastPeerStream) {
      this.send(encodeFrame({ type: 'rst_stream', streamId, status: RstStatus.ProtocolError }));
      return;
    }
    this.lastPeerStream = streamId;
    if (this.goingAway || this.streams.size >= (this.options.maxStreams ?? 1024)) {
      this.send(encodeFrame({ type: 'rst_stream', streamId, status: RstStatus.RefusedStream }));
      return;
    }
    const stream = new SpdyStream(this, streamId, headers, this.options.streamHighWaterMark ?? 16 * 1024);
    this.streams.set(streamId, stream);
    this.options.onStream(stream);
    stream.reject();
    // FIN on SYN_STREAM: the peer sends nothing more (a unidirectional stream never existed in port-forward).
    if (stream.destroyed) return;
    if (frame.flags & FlagFin) stream.receive(Buffer.alloc(0), true);
  }

  reply(stream: SpdyStream): void {
    this.send(encodeFrame({ type: 'syn_reply', streamId: stream.id, flags: 0, headerBlock: this.deflate.compress({}) }));
  }

  reset(stream: SpdyStream, status: number): void {
    this.send(encodeFrame({ type: 'rst_stream', streamId: stream.id, status }));
  }

  writeData(id: number, chunk: Buffer, fin: boolean, done: (err?: Error | null) => void): void {
    // A closed session destroys its streams: what they still write goes nowhere, and no error is raised.
    if (this.closed) return done();
    let writable = true;
    let at = 0;
    do {
      const piece = chunk.subarray(at, at + MaxDataPayload);
      at += piece.length;
      const last = at >= chunk.length;
      writable = this.send(Buffer.concat([dataFrameHeader(id, fin && last, piece.length), piece]));
    } while (at < chunk.length);
    if (writable) return done();
    this.drainWaiters.push(() => done());
  }

  block(stream: SpdyStream): void {
    this.blocked.add(stream);
    this.transport.pause();
  }

  unblock(stream: SpdyStream): void {
    if (!this.blocked.delete(stream) || this.blocked.size > 0 || this.closed) return;
    this.transport.resume();
  }

  forget(stream: SpdyStream): void {
    if (this.streams.get(stream.id) === stream) this.streams.delete(stream.id);
    this.unblock(stream);
    if (this.goingAway && this.streams.size === 0) this.close(GoAwayStatus.Ok);
  }

  private send(frame: Buffer): boolean {
    if (this.closed || this.transport.destroyed) return true;
    this.idle?.refresh();
    return this.transport.write(frame);
  }

  /** GOAWAY, every stream reset, then the connection ends. */
  close(status: number = GoAwayStatus.Ok): void {
    if (this.closed) return;
    this.send(encodeFrame({ type: 'goaway', lastGoodStreamId: this.lastPeerStream, status }));
    this.teardown();
    this.transport.end();
    // A peer that never closes its side does not keep the socket: it goes after a grace period.
    setTimeout(() => this.transport.destroy(), 5000).unref();
  }

  private teardown(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idle);
    this.drainWaiters.splice(0).forEach((w) => w());
    for (const stream of [...this.streams.values()]) stream.destroy();
    this.streams.clear();
    this.blocked.clear();
  }
}
