/**
 * A deterministic tar writer (POSIX ustar + pax records for long names). Same entries → same
 * bytes: entries are sorted, parent directories are added, and every header field that could carry
 * the build machine's state (mtime, uid/gid, user names, modes) is fixed by the caller's options.
 */

export type EntryType = 'file' | 'dir' | 'symlink' | 'hardlink';

export interface TarEntry {
  /** Slash-separated, relative (no leading `/` or `./`); directories may end with `/`. */
  path: string;
  type: EntryType;
  /** Permission bits; default 0o644 for files, 0o755 for directories and executables. */
  mode?: number;
  data?: Buffer;
  /** Target of a symlink, or the path (in the archive) of a hardlink's file. */
  linkname?: string;
}

export interface TarOptions {
  /** Seconds since the epoch written as every entry's mtime (default 0). */
  mtime?: number;
}

const BLOCK = 512;
const TYPEFLAG: Record<EntryType, string> = { file: '0', hardlink: '1', symlink: '2', dir: '5' };

export function normalizeEntryPath(path: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`Invalid archive path ${JSON.stringify(path)}: must be relative and stay inside the archive`);
  return parts.join('/');
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0';
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let len = Buffer.byteLength(body) + 1;
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body);
  return `${len}${body}`;
}

interface Header {
  name: string;
  mode: number;
  size: number;
  mtime: number;
  typeflag: string;
  linkname: string;
}

function header(h: Header): Buffer {
  const buf = Buffer.alloc(BLOCK);
  buf.write(h.name, 0, 100, 'utf8');
  buf.write(octal(h.mode, 8), 100, 'ascii');
  buf.write(octal(0, 8), 108, 'ascii');
  buf.write(octal(0, 8), 116, 'ascii');
  buf.write(octal(h.size, 12), 124, 'ascii');
  buf.write(octal(h.mtime, 12), 136, 'ascii');
  buf.write(' '.repeat(8), 148, 'ascii');
  buf.write(h.typeflag, 156, 'ascii');
  buf.write(h.linkname, 157, 100, 'utf8');
  buf.write('ustar\0' + '00', 257, 'ascii');
  let sum = 0;
  for (const byte of buf) sum += byte;
  buf.write(octal(sum, 7) + ' ', 148, 'ascii');
  return buf;
}

const fits = (s: string): boolean => Buffer.byteLength(s) < 100;

function pad(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

function encodeEntry(e: TarEntry, mtime: number): Buffer[] {
  const name = e.type === 'dir' ? `${e.path}/` : e.path;
  const linkname = e.linkname ?? '';
  const data = e.type === 'file' ? (e.data ?? Buffer.alloc(0)) : Buffer.alloc(0);
  const mode = e.mode ?? (e.type === 'dir' ? 0o755 : e.type === 'symlink' ? 0o777 : 0o644);
  const out: Buffer[] = [];
  let pax = '';
  if (!fits(name)) pax += paxRecord('path', name);
  if (!fits(linkname)) pax += paxRecord('linkpath', linkname);
  if (pax) {
    const body = Buffer.from(pax);
    out.push(header({ name: 'PaxHeader', mode: 0o644, size: body.length, mtime, typeflag: 'x', linkname: '' }), body, pad(body.length));
  }
  const short = (s: string) => (fits(s) ? s : Buffer.from(s).subarray(0, 99).toString('utf8'));
  out.push(header({ name: short(name), mode, size: data.length, mtime, typeflag: TYPEFLAG[e.type], linkname: short(linkname) }));
  if (data.length > 0) out.push(data, pad(data.length));
  return out;
}

/** Adds the parent directories an archive needs so extractors never invent them with other modes. */
function withParents(entries: TarEntry[]): Map<string, TarEntry> {
  const byPath = new Map<string, TarEntry>();
  for (const e of entries) {
    const path = normalizeEntryPath(e.path);
    if (byPath.has(path)) throw new Error(`Duplicate archive path ${path}`);
    byPath.set(path, { ...e, path });
  }
  for (const path of [...byPath.keys()]) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!byPath.has(dir)) byPath.set(dir, { path: dir, type: 'dir' });
    }
  }
  return byPath;
}

/** The archive bytes (uncompressed), two zero blocks at the end as tar requires. */
export function writeTar(entries: TarEntry[], options: TarOptions = {}): Buffer {
  const mtime = options.mtime ?? 0;
  const sorted = [...withParents(entries).values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const parts = sorted.flatMap((e) => encodeEntry(e, mtime));
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}
