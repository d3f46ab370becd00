import { constants, createDeflate, createInflate, type Deflate, type Inflate } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { SpdyDictionary } from './dictionary.js';
import { SpdyProtocolError } from './frames.js';
import { HeaderCompressor, HeaderDecompressor, decodeHeaderBlock, encodeHeaderBlock } from './headers.js';

/** One long-lived zlib stream, flushed per block: what Go's spdystream keeps per direction. */
const flushed = (stream: Deflate | Inflate, block: Buffer): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const onData = (c: Buffer) => out.push(c);
    stream.on('data', onData).once('error', reject);
    stream.write(block);
    stream.flush(constants.Z_SYNC_FLUSH, () => {
      stream.off('data', onData).off('error', reject);
      resolve(Buffer.concat(out));
    });
  });

const portForwardHeaders = (i: number) => ({ streamtype: i % 2 ? 'data' : 'error', port: String(8000 + (i % 5)), requestid: String(i) });

describe('SPDY header blocks', () => {
  it('uses the SPDY/3 dictionary: 1423 bytes, zlib dictionary id e3c6a7c2', () => {
    expect(SpdyDictionary.length).toBe(1423);
    expect(SpdyDictionary.subarray(0, 11).toString('latin1')).toBe('\0\0\0\x07options');
    expect(SpdyDictionary.subarray(-7).toString('latin1')).toBe(',enq=0.');
    // The first compressed block names the dictionary by this Adler-32: 78 xx e3 c6 a7 c2 on the wire.
    const first = new HeaderCompressor().compress({ a: 'b' });
    expect(first.subarray(2, 6).toString('hex')).toBe('e3c6a7c2');
  });

  it('round-trips name/value blocks, several values of a name joined by NUL', () => {
    const headers = new Map([['streamtype', ['data']], ['port', ['8080']], ['x-many', ['a', 'b', '']]]);
    expect(decodeHeaderBlock(encodeHeaderBlock(headers))).toEqual(headers);
    expect(encodeHeaderBlock({}).toString('hex')).toBe('00000000');
    expect(encodeHeaderBlock({ Port: '1' }).toString('latin1')).toBe('\0\0\0\x01\0\0\0\x04port\0\0\0\x011');
  });

  const entry = (name: string, value: string) => Buffer.concat([u32(name.length), Buffer.from(name), u32(value.length), Buffer.from(value)]);
  const u32 = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  it.each([
    ['shorter than its count', Buffer.from([0, 0])],
    ['a count it cannot hold', Buffer.concat([u32(0xffffffff), entry('a', 'b')])],
    ['a name running past its end', Buffer.concat([u32(1), u32(100), Buffer.from('abc')])],
    ['a value running past its end', Buffer.concat([u32(1), u32(1), Buffer.from('a'), u32(50)])],
    ['an uppercase name', Buffer.concat([u32(1), entry('Port', '1')])],
    ['an empty name', Buffer.concat([u32(1), entry('', '1')])],
    ['a repeated name', Buffer.concat([u32(2), entry('port', '1'), entry('port', '2')])],
    ['trailing bytes', Buffer.concat([u32(1), entry('port', '1'), Buffer.from('x')])],
  ])('refuses a block with %s', (_what, block) => {
    expect(() => decodeHeaderBlock(block)).toThrow(SpdyProtocolError);
  });

  it('compresses block after block into one zlib stream a long-lived inflater (the peer) reads', async () => {
    const ours = new HeaderCompressor();
    const peer = createInflate({ dictionary: SpdyDictionary });
    for (let i = 0; i < 200; i++) {
      const headers = i === 50 ? { big: 'x'.repeat(40_000) + i } : portForwardHeaders(i);
      expect(decodeHeaderBlock(await flushed(peer, ours.compress(headers)))).toEqual(new Map(Object.entries(headers).map(([k, v]) => [k, [v]])));
    }
    peer.destroy();
  });

  it('decompresses block after block of a long-lived deflater (the peer), compressing at its best', async () => {
    const peer = createDeflate({ dictionary: SpdyDictionary, level: 9 });
    const ours = new HeaderDecompressor(64 * 1024);
    for (let i = 0; i < 200; i++) {
      const headers = i === 70 ? { big: 'y'.repeat(50_000) } : portForwardHeaders(i);
      expect(ours.decompress(await flushed(peer, encodeHeaderBlock(headers)))).toEqual(new Map(Object.entries(headers).map(([k, v]) => [k, [v]])));
    }
    peer.destroy();
  });

  it('refuses a block that inflates past its limit (a few bytes can name megabytes)', async () => {
    const peer = createDeflate({ dictionary: SpdyDictionary });
    const bomb = await flushed(peer, encodeHeaderBlock({ x: 'z'.repeat(5_000_000) }));
    expect(bomb.length).toBeLessThan(10_000);
    expect(() => new HeaderDecompressor(64 * 1024).decompress(bomb)).toThrow(/larger than 65536 bytes/);
    peer.destroy();
  });

  it('refuses garbage and a stream compressed without the dictionary', () => {
    expect(() => new HeaderDecompressor(1024).decompress(Buffer.from('not zlib at all'))).toThrow(/does not decompress/);
    const noDictionary = createDeflate();
    return flushed(noDictionary, encodeHeaderBlock({ a: 'b' })).then((block) => {
      // Accepted by zlib (no dictionary asked for) and parsed: the peer chose not to use it.
      expect(new HeaderDecompressor(1024).decompress(block)).toEqual(new Map([['a', ['b']]]));
      noDictionary.destroy();
    });
  });
});
