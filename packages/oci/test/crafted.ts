/**
 * Crafted archives for the unpacker's tests: raw ustar headers with whatever path, type and link
 * a malicious layer might carry (the package's own writer refuses to write them).
 */
import { gzipSync } from 'node:zlib';
import { type Digest, type ImageLayout, MediaType, sha256 } from '../src/index.js';

export interface RawEntry {
  name: string;
  /** tar typeflag: '0' file, '1' hardlink, '2' symlink, '3' char, '4' block, '5' dir, '6' fifo */
  type?: string;
  linkname?: string;
  data?: string;
  mode?: number;
}

function header(e: RawEntry, size: number): Buffer {
  const b = Buffer.alloc(512);
  b.write(e.name, 0, 100);
  b.write(`${(e.mode ?? 0o644).toString(8).padStart(7, '0')}\0`, 100);
  b.write('0000000\0', 108);
  b.write('0000000\0', 116);
  b.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  b.write('00000000000\0', 136);
  b.write('        ', 148);
  b.write(e.type ?? '0', 156);
  b.write(e.linkname ?? '', 157, 100);
  b.write('ustar\x0000', 257);
  let sum = 0;
  for (const x of b) sum += x;
  b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return b;
}

export function rawTar(entries: RawEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = Buffer.from(e.data ?? '');
    parts.push(header(e, data.length), data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** An image in the layout whose layers are exactly these archives, tagged `tag`. */
export async function imageFromTars(layout: ImageLayout, tag: string, tars: Buffer[]): Promise<Digest[]> {
  const layers = [];
  for (const tar of tars) layers.push({ mediaType: MediaType.layerGzip, ...(await layout.writeBlob(gzipSync(tar))) });
  const config = await layout.writeBlob(Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: tars.map(sha256) } })));
  const manifest = await layout.writeBlob(Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.manifest, config: { mediaType: MediaType.config, ...config }, layers })));
  await layout.tag(tag, { mediaType: MediaType.manifest, ...manifest });
  return layers.map((l) => l.digest);
}
