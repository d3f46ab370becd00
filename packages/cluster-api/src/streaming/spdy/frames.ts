/**
 * SPDY/3.1 frames as Go's spdystream writes and reads them (the framing under kubectl port-forward,
 * exec and attach): 8-byte headers, control frames checked as strictly as spdystream checks them,
 * DATA payloads handed on piece by piece as they arrive, so a 16 MiB frame never sits in memory.
 * Header blocks stay compressed here (headers.ts owns the zlib context).
 */

export const SpdyVersion = 3;
/** The largest payload a frame's 24-bit length can name. */
export const MaxFrameLength = 0xffffff;

export const FlagFin = 0x01;
export const FlagUnidirectional = 0x02;

/** RST_STREAM status codes. */
export const RstStatus = {
  ProtocolError: 1,
  InvalidStream: 2,
  RefusedStream: 3,
  UnsupportedVersion: 4,
  Cancel: 5,
  InternalError: 6,
  FlowControlError: 7,
  StreamInUse: 8,
  StreamAlreadyClosed: 9,
  FrameTooLarge: 11,
} as const;

/** GOAWAY status codes. */
export const GoAwayStatus = { Ok: 0, ProtocolError: 1, InternalError: 2 } as const;

export interface SettingsEntry {
  flags: number;
  id: number;
  value: number;
}

export type Frame =
  | { type: 'syn_stream'; streamId: number; associatedId: number; priority: number; slot: number; flags: number; headerBlock: Buffer }
  | { type: 'syn_reply'; streamId: number; flags: number; headerBlock: Buffer }
  | { type: 'headers'; streamId: number; flags: number; headerBlock: Buffer }
  | { type: 'rst_stream'; streamId: number; status: number }
  | { type: 'settings'; flags: number; entries: SettingsEntry[] }
  | { type: 'ping'; id: number }
  | { type: 'goaway'; lastGoodStreamId: number; status: number }
  | { type: 'window_update'; streamId: number; delta: number }
  /** One piece of a DATA frame's payload; `fin` only on the last piece of a frame that carries FIN. */
  | { type: 'data'; streamId: number; fin: boolean; data: Buffer };

/** A frame no conforming peer sends: the connection ends with GOAWAY (PROTOCOL_ERROR). */
export class SpdyProtocolError extends Error {
  override readonly name = 'SpdyProtocolError';
}

const ControlTypes = { syn_stream: 1, syn_reply: 2, rst_stream: 3, settings: 4, ping: 6, goaway: 7, headers: 8, window_update: 9 } as const;
const StreamIdMask = 0x7fffffff;

function controlHeader(type: number, flags: number, length: number): Buffer {
  if (length > MaxFrameLength) throw new RangeError(`control frame payload of ${length} bytes exceeds ${MaxFrameLength}`);
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE((0x80000000 | (SpdyVersion << 16) | type) >>> 0, 0);
  head.writeUInt32BE(((flags << 24) | length) >>> 0, 4);
  return head;
}

/** The 8 bytes before a DATA payload: written apart from it, so the payload is never copied. */
export function dataFrameHeader(streamId: number, fin: boolean, length: number): Buffer {
  if (length > MaxFrameLength) throw new RangeError(`data frame payload of ${length} bytes exceeds ${MaxFrameLength}`);
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(streamId & StreamIdMask, 0);
  head.writeUInt32BE((((fin ? FlagFin : 0) << 24) | length) >>> 0, 4);
  return head;
}

const words = (...values: number[]): Buffer => {
  const out = Buffer.allocUnsafe(values.length * 4);
  values.forEach((v, i) => out.writeUInt32BE(v >>> 0, i * 4));
  return out;
};

function controlBody(frame: Exclude<Frame, { type: 'data' }>): { flags: number; body: Buffer } {
  switch (frame.type) {
    case 'syn_stream': {
      const fixed = Buffer.allocUnsafe(10);
      fixed.writeUInt32BE(frame.streamId & StreamIdMask, 0);
      fixed.writeUInt32BE(frame.associatedId & StreamIdMask, 4);
      fixed[8] = (frame.priority & 0x7) << 5;
      fixed[9] = frame.slot & 0xff;
      return { flags: frame.flags, body: Buffer.concat([fixed, frame.headerBlock]) };
    }
    case 'syn_reply':
    case 'headers':
      return { flags: frame.flags, body: Buffer.concat([words(frame.streamId & StreamIdMask), frame.headerBlock]) };
    case 'rst_stream':
      return { flags: 0, body: words(frame.streamId & StreamIdMask, frame.status) };
    case 'settings':
      return { flags: frame.flags, body: words(frame.entries.length, ...frame.entries.flatMap((e) => [((e.flags << 24) | (e.id & 0xffffff)) >>> 0, e.value])) };
    case 'ping':
      return { flags: 0, body: words(frame.id) };
    case 'goaway':
      return { flags: 0, body: words(frame.lastGoodStreamId & StreamIdMask, frame.status) };
    case 'window_update':
      return { flags: 0, body: words(frame.streamId & StreamIdMask, frame.delta & StreamIdMask) };
  }
}

export function encodeFrame(frame: Frame): Buffer {
  if (frame.type === 'data') return Buffer.concat([dataFrameHeader(frame.streamId, frame.fin, frame.data.length), frame.data]);
  const { flags, body } = controlBody(frame);
  return Buffer.concat([controlHeader(ControlTypes[frame.type], flags, body.length), body]);
}

/** What spdystream's Framer refuses, checked on a whole control frame's payload. */
function decodeControl(type: number, flags: number, p: Buffer): Frame | undefined {
  const u32 = (at: number) => p.readUInt32BE(at);
  const exact = (n: number, what: string) => {
    if (p.length !== n) throw new SpdyProtocolError(`${what} frame of ${p.length} bytes, expected ${n}`);
  };
  const streamOf = (at: number, what: string) => {
    const id = u32(at) & StreamIdMask;
    if (id === 0) throw new SpdyProtocolError(`${what} frame for stream 0`);
    return id;
  };
  switch (type) {
    case 1:
      if (p.length < 10) throw new SpdyProtocolError('SYN_STREAM frame shorter than 10 bytes');
      return { type: 'syn_stream', streamId: streamOf(0, 'SYN_STREAM'), associatedId: u32(4) & StreamIdMask, priority: p[8]! >> 5, slot: p[9]!, flags, headerBlock: p.subarray(10) };
    case 2:
    case 8: {
      const name = type === 2 ? 'SYN_REPLY' : 'HEADERS';
      if (p.length < 4) throw new SpdyProtocolError(`${name} frame shorter than 4 bytes`);
      return { type: type === 2 ? 'syn_reply' : 'headers', streamId: streamOf(0, name), flags, headerBlock: p.subarray(4) };
    }
    case 3: {
      exact(8, 'RST_STREAM');
      const status = u32(4);
      if (status === 0) throw new SpdyProtocolError('RST_STREAM frame with status 0');
      return { type: 'rst_stream', streamId: streamOf(0, 'RST_STREAM'), status };
    }
    case 4:
      return decodeSettings(flags, p);
    case 6:
      exact(4, 'PING');
      if (flags !== 0 || u32(0) === 0) throw new SpdyProtocolError('PING frame with flags or id 0');
      return { type: 'ping', id: u32(0) };
    case 7:
      exact(8, 'GOAWAY');
      if (flags !== 0) throw new SpdyProtocolError('GOAWAY frame with flags');
      return { type: 'goaway', lastGoodStreamId: u32(0) & StreamIdMask, status: u32(4) };
    case 9:
      exact(8, 'WINDOW_UPDATE');
      if (flags !== 0) throw new SpdyProtocolError('WINDOW_UPDATE frame with flags');
      return { type: 'window_update', streamId: u32(0) & StreamIdMask, delta: u32(4) & StreamIdMask };
    default:
      // SPDY/3: a control frame of a type the endpoint does not know is ignored.
      return undefined;
  }
}

function decodeSettings(flags: number, p: Buffer): Frame {
  if (p.length < 4) throw new SpdyProtocolError('SETTINGS frame shorter than 4 bytes');
  const count = p.readUInt32BE(0);
  if (p.length !== 4 + count * 8) throw new SpdyProtocolError(`SETTINGS frame of ${p.length} bytes for ${count} entries`);
  const entries: SettingsEntry[] = [];
  for (let at = 4; at < p.length; at += 8) {
    const head = p.readUInt32BE(at);
    entries.push({ flags: head >>> 24, id: head & 0xffffff, value: p.readUInt32BE(at + 4) });
  }
  return { type: 'settings', flags, entries };
}

export interface DecoderOptions {
  /** Control frames are held whole: larger ones end the connection (header blocks are tiny in practice). */
  maxControlFrame: number;
}

/**
 * Incremental decoder: `push` any slicing of the byte stream; frames come out in order through
 * `onFrame`. Malformed input throws a SpdyProtocolError; the decoder is unusable afterwards.
 */
export class FrameDecoder {
  private readonly head = Buffer.alloc(8);
  private headFill = 0;
  /** Bytes of the current frame's payload still to come (0: reading a header). */
  private remaining = 0;
  private control: { type: number; flags: number; body: Buffer; fill: number } | undefined;
  private data: { streamId: number; fin: boolean } | undefined;

  constructor(
    private readonly options: DecoderOptions,
    private readonly onFrame: (frame: Frame) => void,
  ) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.remaining === 0 && !this.control && !this.data) {
        const take = Math.min(8 - this.headFill, chunk.length - at);
        chunk.copy(this.head, this.headFill, at, at + take);
        this.headFill += take;
        at += take;
        if (this.headFill === 8) this.startFrame();
        continue;
      }
      const take = Math.min(this.remaining, chunk.length - at);
      this.remaining -= take;
      if (this.data) this.dataPiece(chunk.subarray(at, at + take));
      else this.controlPiece(chunk, at, take);
      at += take;
    }
  }

  private startFrame(): void {
    this.headFill = 0;
    const first = this.head.readUInt32BE(0);
    const second = this.head.readUInt32BE(4);
    const flags = second >>> 24;
    const length = second & 0xffffff;
    if (first & 0x80000000) {
      const version = (first >>> 16) & 0x7fff;
      if (version !== SpdyVersion) throw new SpdyProtocolError(`control frame of SPDY version ${version}`);
      if (length > this.options.maxControlFrame) throw new SpdyProtocolError(`control frame of ${length} bytes exceeds ${this.options.maxControlFrame}`);
      this.control = { type: first & 0xffff, flags, body: Buffer.allocUnsafe(length), fill: 0 };
      this.remaining = length;
      if (length === 0) this.finishControl();
      return;
    }
    const streamId = first & StreamIdMask;
    if (streamId === 0) throw new SpdyProtocolError('DATA frame for stream 0');
    const fin = (flags & FlagFin) !== 0;
    if (length === 0) {
      if (fin) this.onFrame({ type: 'data', streamId, fin, data: Buffer.alloc(0) });
      return;
    }
    this.data = { streamId, fin };
    this.remaining = length;
  }

  private dataPiece(piece: Buffer): void {
    const { streamId, fin } = this.data!;
    const last = this.remaining === 0;
    if (last) this.data = undefined;
    this.onFrame({ type: 'data', streamId, fin: last && fin, data: piece });
  }

  private controlPiece(chunk: Buffer, at: number, take: number): void {
    const control = this.control!;
    chunk.copy(control.body, control.fill, at, at + take);
    control.fill += take;
    if (this.remaining === 0) this.finishControl();
  }

  private finishControl(): void {
    const { type, flags, body } = this.control!;
    this.control = undefined;
    const frame = decodeControl(type, flags, body);
    if (frame) this.onFrame(frame);
  }
}
