/**
 * SPDY/3 header blocks: the name/value block (32-bit counts and lengths, lowercase names, several
 * values of one name joined by NUL) and the one zlib context per direction that compresses every
 * block of a connection in turn, preloaded with the SPDY dictionary and flushed (Z_SYNC_FLUSH) after
 * each block, as Go's spdystream does. A context lives as long as its connection: blocks are
 * compressed and decompressed in frame order.
 */
import { constants, deflateRawSync, deflateSync, inflateRawSync, inflateSync, type ZlibOptions } from 'node:zlib';
import { SpdyDictionary } from './dictionary.js';
import { SpdyProtocolError } from './frames.js';

/** Header names (lowercase) to their values, in the order they came. */
export type SpdyHeaders = Map<string, string[]>;

export function encodeHeaderBlock(headers: SpdyHeaders | Record<string, string | readonly string[]>): Buffer {
  const entries = headers instanceof Map ? [...headers] : Object.entries(headers).map(([k, v]) => [k, typeof v === 'string' ? [v] : v] as const);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [name, values] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

const u32 = (n: number): Buffer => {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** Parses a decompressed block, refusing what spdystream refuses (uppercase or repeated names) and anything truncated or trailing. */
export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  let at = 0;
  const take = (what: string): Buffer => {
    if (at + 4 > block.length) throw new SpdyProtocolError(`header block truncated in ${what} length`);
    const length = block.readUInt32BE(at);
    at += 4;
    if (length > block.length - at) throw new SpdyProtocolError(`header block truncated in ${what}`);
    at += length;
    return block.subarray(at - length, at);
  };
  if (block.length < 4) throw new SpdyProtocolError('header block shorter than its count');
  const count = block.readUInt32BE(0);
  at = 4;
  // Every entry needs at least its two lengths: a count the block cannot hold is refused before any loop.
  if (count > (block.length - 4) / 8) throw new SpdyProtocolError(`header block of ${block.length} bytes cannot hold ${count} headers`);
  const headers: SpdyHeaders = new Map();
  for (let i = 0; i < count; i++) {
    const name = take('name').toString('utf8');
    const value = take('value').toString('utf8');
    if (name === '' || name !== name.toLowerCase()) throw new SpdyProtocolError('header name empty or not lowercase');
    if (headers.has(name)) throw new SpdyProtocolError('header name repeated');
    headers.set(name, value.split('\0'));
  }
  if (at !== block.length) throw new SpdyProtocolError('header block has trailing bytes');
  return headers;
}

/**
 * One direction's zlib context, run synchronously. A block flushed with Z_SYNC_FLUSH ends on a byte
 * boundary, so the next block is a raw deflate stream whose back-references reach into what came
 * before: compressing or inflating it with the last 32 KiB of the connection's history (the SPDY
 * dictionary, then every block so far) as the preset dictionary is exactly what one long-lived zlib
 * stream does. The peer sees one ordinary zlib stream; frames are handled in order, in the tick
 * they arrive, with no queue.
 */
abstract class ZlibHistory {
  private history: Buffer = SpdyDictionary;
  protected first = true;

  protected options(extra: ZlibOptions): ZlibOptions {
    return { ...extra, dictionary: this.history, finishFlush: constants.Z_SYNC_FLUSH };
  }

  protected remember(block: Buffer): void {
    this.first = false;
    const joined = Buffer.concat([this.history, block]);
    this.history = joined.subarray(Math.max(0, joined.length - Window));
  }
}

/** zlib's largest window, the furthest back a deflate match may reach. */
const Window = 32 * 1024;

export class HeaderCompressor extends ZlibHistory {
  compress(headers: SpdyHeaders | Record<string, string | readonly string[]>): Buffer {
    const block = encodeHeaderBlock(headers);
    const options = this.options({ level: constants.Z_BEST_COMPRESSION });
    // The first block carries the zlib header naming the dictionary (FDICT), as the peer's reader expects.
    const out = this.first ? deflateSync(block, options) : deflateRawSync(block, options);
    this.remember(block);
    return out;
  }
}

export class HeaderDecompressor extends ZlibHistory {
  /** `maxBytes`: the largest decompressed block accepted (a few bytes can inflate to megabytes). */
  constructor(private readonly maxBytes: number) {
    super();
  }

  decompress(block: Buffer): SpdyHeaders {
    const options = this.options({ maxOutputLength: this.maxBytes });
    let inflated: Buffer;
    try {
      inflated = this.first ? inflateSync(block, options) : inflateRawSync(block, options);
    } catch (err) {
      const tooLarge = (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      throw new SpdyProtocolError(tooLarge ? `header block larger than ${this.maxBytes} bytes` : 'header block does not decompress');
    }
    this.remember(inflated);
    return decodeHeaderBlock(inflated);
  }
}
