/**
 * A streaming tar reader for image layers: ustar, pax (`x` records; global `g` ignored) and GNU
 * long names (`L`/`K`), base-256 sizes. Entries come out one at a time with their data in memory,
 * so a layer never has to fit in memory whole.
 */
import { ChunkReader } from './chunk-reader.js';

export type ReadEntryType = 'file' | 'dir' | 'symlink' | 'hardlink' | 'char' | 'block' | 'fifo' | 'other';

export interface ReadEntry {
  path: string;
  type: ReadEntryType;
  mode: number;
  size: number;
  mtime: number;
  linkname: string;
  data: Buffer;
}

const TYPES: Record<string, ReadEntryType> = { '0': 'file', '\0': 'file', '7': 'file', '1': 'hardlink', '2': 'symlink', '3': 'char', '4': 'block', '5': 'dir', '6': 'fifo' };

function cString(buf: Buffer, start: number, len: number): string {
  const field = buf.subarray(start, start + len);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? len : end).toString('utf8');
}

function numeric(buf: Buffer, start: number, len: number): number {
  const field = buf.subarray(start, start + len);
  if (field[0]! & 0x80) {
    // GNU base-256: big-endian, the high bit of the first byte is the marker.
    let n = field[0]! & 0x7f;
    for (let i = 1; i < len; i++) n = n * 256 + field[i]!;
    return n;
  }
  const text = cString(buf, start, len).trim();
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(`Corrupt tar header: ${JSON.stringify(text)} is not an octal number`);
  return parseInt(text, 8);
}

function checksumOk(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!;
  return sum === numeric(block, 148, 8);
}

function parsePax(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    const len = parseInt(data.subarray(pos, space).toString('ascii'), 10);
    if (space === -1 || !Number.isFinite(len) || len <= 0) throw new Error('Corrupt pax header record');
    const record = data.subarray(space + 1, pos + len - 1).toString('utf8');
    const eq = record.indexOf('=');
    out[record.slice(0, eq)] = record.slice(eq + 1);
    pos += len;
  }
  return out;
}

const padded = (size: number): number => Math.ceil(size / 512) * 512;

/** Yields every entry of a tar stream; throws on a truncated or corrupt archive. */
export async function* readTar(source: AsyncIterable<Buffer>): AsyncGenerator<ReadEntry> {
  const reader = new ChunkReader(source);
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  for (;;) {
    const block = await reader.read(512);
    if (block === undefined || block.every((b) => b === 0)) return await reader.drain();
    if (!checksumOk(block)) throw new Error('Corrupt tar header: checksum mismatch');
    const size = numeric(block, 124, 12);
    const flag = String.fromCharCode(block[156]!);
    const data = (await reader.read(padded(size)))?.subarray(0, size);
    if (data === undefined) throw new Error('Truncated tar archive');
    if (flag === 'x') { pax = parsePax(data); continue; }
    if (flag === 'g') continue;
    if (flag === 'L') { longName = cString(data, 0, data.length); continue; }
    if (flag === 'K') { longLink = cString(data, 0, data.length); continue; }
    const prefix = block.subarray(257, 263).toString('ascii') === 'ustar\0' ? cString(block, 345, 155) : '';
    const short = cString(block, 0, 100);
    yield {
      path: pax.path ?? longName ?? (prefix ? `${prefix}/${short}` : short),
      type: TYPES[flag] ?? 'other',
      mode: numeric(block, 100, 8) & 0o7777,
      size: pax.size !== undefined ? Number(pax.size) : size,
      mtime: numeric(block, 136, 12),
      linkname: pax.linkpath ?? longLink ?? cString(block, 157, 100),
      data,
    };
    pax = {};
    longName = undefined;
    longLink = undefined;
  }
}
