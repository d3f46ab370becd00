import { describe, expect, it } from 'vitest';
import { FrameDecoder, SpdyProtocolError, encodeFrame, type Frame } from './frames.js';

const decodeAll = (bytes: Buffer, pieces: number[] = [bytes.length], maxControlFrame = 1 << 20): Frame[] => {
  const out: Frame[] = [];
  const decoder = new FrameDecoder({ maxControlFrame }, (f) => out.push(f));
  let at = 0;
  for (const n of pieces) {
    decoder.push(bytes.subarray(at, at + n));
    at += n;
  }
  if (at < bytes.length) decoder.push(bytes.subarray(at));
  return out;
};

/** DATA pieces of one frame joined back, so a frame compares whole however it was sliced. */
const joined = (frames: Frame[]): Frame[] => {
  const out: Frame[] = [];
  for (const f of frames) {
    const last = out.at(-1);
    if (f.type === 'data' && last?.type === 'data' && last.streamId === f.streamId && !last.fin) {
      out[out.length - 1] = { ...last, data: Buffer.concat([last.data, f.data]), fin: f.fin };
    } else out.push(f.type === 'data' ? { ...f, data: Buffer.from(f.data) } : f);
  }
  return out;
};

const block = Buffer.from('compressed header block bytes');

const frames: Frame[] = [
  { type: 'syn_stream', streamId: 1, associatedId: 0, priority: 0, slot: 0, flags: 0, headerBlock: block },
  { type: 'syn_stream', streamId: 0x7fffffff, associatedId: 5, priority: 7, slot: 3, flags: 0x03, headerBlock: Buffer.alloc(0) },
  { type: 'syn_reply', streamId: 3, flags: 1, headerBlock: block },
  { type: 'headers', streamId: 5, flags: 0, headerBlock: block },
  { type: 'rst_stream', streamId: 7, status: 5 },
  { type: 'settings', flags: 1, entries: [{ flags: 1, id: 4, value: 100 }, { flags: 0, id: 7, value: 65536 }] },
  { type: 'settings', flags: 0, entries: [] },
  { type: 'ping', id: 1 },
  { type: 'ping', id: 0xfffffffe },
  { type: 'goaway', lastGoodStreamId: 9, status: 1 },
  { type: 'window_update', streamId: 0, delta: 0x7fffffff },
  { type: 'data', streamId: 1, fin: false, data: Buffer.from('hello') },
  { type: 'data', streamId: 1, fin: true, data: Buffer.alloc(0) },
  { type: 'data', streamId: 9, fin: true, data: Buffer.alloc(70_000, 7) },
];

describe('SPDY/3.1 frame codec', () => {
  it.each(frames.map((f) => [f.type, f] as const))('round-trips %s', (_type, frame) => {
    expect(joined(decodeAll(encodeFrame(frame)))).toEqual([frame]);
  });

  it('writes the wire format spdystream reads: control bit, version 3, type, flags, 24-bit length', () => {
    expect(encodeFrame({ type: 'ping', id: 1 }).toString('hex')).toBe('80030006' + '00000004' + '00000001');
    expect(encodeFrame({ type: 'rst_stream', streamId: 3, status: 5 }).toString('hex')).toBe('80030003' + '00000008' + '00000003' + '00000005');
    expect(encodeFrame({ type: 'data', streamId: 1, fin: true, data: Buffer.from('ab') }).toString('hex')).toBe('00000001' + '01000002' + '6162');
  });

  it('decodes the same frames from every slicing of the byte stream', () => {
    const bytes = Buffer.concat(frames.slice(0, 12).map(encodeFrame));
    const whole = joined(decodeAll(bytes));
    for (const size of [1, 2, 3, 7, 8, 9, 13, 64]) {
      const pieces = Array.from({ length: Math.ceil(bytes.length / size) }, () => size);
      expect(joined(decodeAll(bytes, pieces))).toEqual(whole);
    }
    // Every split point of two frames.
    const pair = Buffer.concat([encodeFrame(frames[0]!), encodeFrame(frames[11]!)]);
    for (let cut = 0; cut <= pair.length; cut++) expect(joined(decodeAll(pair, [cut]))).toEqual([frames[0], frames[11]]);
  });

  it('hands a DATA payload on as it arrives, FIN only on its last piece', () => {
    const bytes = encodeFrame({ type: 'data', streamId: 5, fin: true, data: Buffer.alloc(1000, 1) });
    const pieces = decodeAll(bytes, [8, 100, 400, 500]);
    expect(pieces.map((p) => (p.type === 'data' ? [p.data.length, p.fin] : p.type))).toEqual([[100, false], [400, false], [500, true]]);
  });

  it('ignores a control frame of a type it does not know (SPDY/3) and goes on', () => {
    const unknown = Buffer.from('8003000a' + '00000003' + 'abcdef', 'hex');
    expect(decodeAll(Buffer.concat([unknown, encodeFrame({ type: 'ping', id: 3 })]))).toEqual([{ type: 'ping', id: 3 }]);
  });

  const hex = (s: string) => Buffer.from(s.replace(/\s/g, ''), 'hex');
  it.each([
    ['a version other than 3', '80020006 00000004 00000001', /version 2/],
    ['DATA for stream 0', '00000000 00000001 61', /stream 0/],
    ['SYN_STREAM for stream 0', '80030001 0000000a 00000000 00000000 0000', /stream 0/],
    ['a SYN_STREAM shorter than its fixed part', '80030001 00000004 00000001', /shorter/],
    ['a SYN_REPLY shorter than its stream id', '80030002 00000002 0000', /shorter/],
    ['RST_STREAM of the wrong length', '80030003 00000004 00000001', /expected 8/],
    ['RST_STREAM with status 0', '80030003 00000008 00000001 00000000', /status 0/],
    ['RST_STREAM for stream 0', '80030003 00000008 00000000 00000001', /stream 0/],
    ['PING of the wrong length', '80030006 00000008 00000001 00000001', /expected 4/],
    ['PING with id 0', '80030006 00000004 00000000', /id 0/],
    ['PING with flags', '80030006 01000004 00000001', /flags/],
    ['GOAWAY of the wrong length', '80030007 00000004 00000001', /expected 8/],
    ['WINDOW_UPDATE with flags', '80030009 01000008 00000001 00000001', /flags/],
    ['SETTINGS whose count does not match its length', '80030004 0000000c 00000002 01000004 00000064', /entries/],
  ])('refuses %s', (_what, bytes, message) => {
    expect(() => decodeAll(hex(bytes))).toThrow(SpdyProtocolError);
    expect(() => decodeAll(hex(bytes))).toThrow(message);
  });

  it('refuses a control frame larger than its limit before holding it', () => {
    const big = encodeFrame({ type: 'headers', streamId: 1, flags: 0, headerBlock: Buffer.alloc(5000) });
    expect(() => decodeAll(big.subarray(0, 8), [8], 4096)).toThrow(/exceeds 4096/);
  });

  it('never writes a payload its 24-bit length cannot name', () => {
    expect(() => encodeFrame({ type: 'data', streamId: 1, fin: false, data: Buffer.alloc(0x1000000) })).toThrow(RangeError);
  });

  it('survives random bytes: either frames or a SpdyProtocolError, never anything else', () => {
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
    for (let round = 0; round < 300; round++) {
      const bytes = Buffer.from(Array.from({ length: 8 + Math.floor(random() * 64) }, () => Math.floor(random() * 256)));
      if (round % 2) bytes[0] = 0x80; // a control frame of a random version
      try {
        decodeAll(bytes, [], 64);
      } catch (err) {
        expect(err).toBeInstanceOf(SpdyProtocolError);
      }
    }
  });
});
