/**
 * Layers from files: a deterministic tar, gzip'd deterministically (node:zlib writes mtime 0 and
 * a fixed OS byte in the gzip header), stored in a layout. The uncompressed digest (diff_id) keys a
 * per-process cache, so a layer that is the same for every function (the runtime) is compressed once.
 */
import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import { sha256 } from './digest.js';
import type { ImageLayout } from './layout.js';
import { MediaType } from './media-types.js';
import { type TarEntry, writeTar } from './tar.js';
import type { Descriptor, Digest } from './types.js';

const gzip = promisify(gzipCb);

export interface LayerSpec {
  entries: TarEntry[];
  /** Written to the image history (`created_by`), e.g. what the layer holds. */
  createdBy?: string;
  comment?: string;
}

export interface BuiltLayer {
  descriptor: Descriptor;
  diffId: Digest;
}

export interface LayerOptions {
  /** mtime of every entry, seconds since the epoch. */
  mtime: number;
  /** gzip level 1–9 (default 6, as most image builders use). */
  gzipLevel?: number;
}

const compressed = new Map<string, { digest: Digest; size: number }>();

export async function buildLayer(layout: ImageLayout, spec: LayerSpec, options: LayerOptions): Promise<BuiltLayer> {
  const tar = writeTar(spec.entries, { mtime: options.mtime });
  const diffId = sha256(tar);
  const level = options.gzipLevel ?? 6;
  const key = `${diffId}:${level}`;
  const cached = compressed.get(key);
  if (cached && (await layout.hasBlob(cached.digest))) {
    return { diffId, descriptor: { mediaType: MediaType.layerGzip, ...cached } };
  }
  const blob = await layout.writeBlob(await gzip(tar, { level }));
  compressed.set(key, blob);
  return { diffId, descriptor: { mediaType: MediaType.layerGzip, ...blob } };
}

/** `SOURCE_DATE_EPOCH` (reproducible-builds.org) or 0: the time written into layers and the config. */
export function sourceDateEpoch(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SOURCE_DATE_EPOCH;
  if (raw === undefined || raw === '') return 0;
  if (!/^\d{1,12}$/.test(raw)) throw new Error(`SOURCE_DATE_EPOCH must be a whole number of seconds, got ${JSON.stringify(raw.slice(0, 40))}`);
  return Number(raw);
}
