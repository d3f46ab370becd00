/**
 * Picks and opens a storage backend from a URL (`--storage`):
 *
 *   memory:                 in-process, lost on exit (tests, demos)
 *   sqlite:<path>           the embedded default; `sqlite:///abs/path` and `sqlite:rel/path` both work,
 *                           parent directories are created
 *   etcd://host:port,…      an etcd cluster (etcd.ts); TLS files in opts.etcd
 */
import { checkCompactionPolicy, DEFAULT_COMPACTION, type CompactionPolicy } from './compactor.js';
import { StorageError } from './errors.js';
import { EtcdStorage } from './etcd/etcd.js';
import { parseEtcdEndpoints, type EtcdClientOptions } from './etcd/client.js';
import type { Storage } from './interface.js';
import { MemoryStorage } from './memory/memory.js';
import { SqliteStorage } from './sqlite/sqlite.js';

export const STORAGE_SCHEMES = ['memory', 'sqlite', 'etcd'] as const;
export type StorageScheme = (typeof STORAGE_SCHEMES)[number];

export interface OpenStorageOptions {
  /** Background compaction: overrides of DEFAULT_COMPACTION, or false for none. Default: on. */
  readonly compaction?: Partial<CompactionPolicy> | false;
  /** TLS files and timeouts for `etcd://` URLs. */
  readonly etcd?: EtcdClientOptions;
}

export interface StorageUrl {
  readonly scheme: StorageScheme;
  /** The rest of the URL after `scheme:` (for sqlite, the file path). */
  readonly location: string;
}

function badUrl(url: string, why: string): StorageError {
  return new StorageError('InvalidArgument', url, `invalid storage URL ${JSON.stringify(url)}: ${why}`);
}

/** Splits and checks a storage URL without opening anything (for configuration validation). */
export function parseStorageUrl(url: string): StorageUrl {
  if (typeof url !== 'string' || url.trim() === '') throw badUrl(String(url), `expected one of ${STORAGE_SCHEMES.map((s) => `${s}:`).join(', ')}`);
  const colon = url.indexOf(':');
  const scheme = url.slice(0, colon).toLowerCase();
  if (colon < 1 || !(STORAGE_SCHEMES as readonly string[]).includes(scheme)) {
    throw badUrl(url, `unknown scheme; expected one of ${STORAGE_SCHEMES.map((s) => `${s}:`).join(', ')}`);
  }
  let location = url.slice(colon + 1);
  if (scheme === 'sqlite') {
    if (location.startsWith('//')) location = location.slice(2);
    if (location === '') throw badUrl(url, 'sqlite: needs a file path, e.g. sqlite:./data/state.db');
    if (location.includes('\0')) throw badUrl(url, 'the path contains a NUL byte');
  }
  if (scheme === 'etcd') parseEtcdEndpoints(location);
  return { scheme: scheme as StorageScheme, location };
}

export async function openStorage(url: string, opts: OpenStorageOptions = {}): Promise<Storage> {
  const { scheme, location } = parseStorageUrl(url);
  const compaction = opts.compaction === false ? false : { ...DEFAULT_COMPACTION, ...opts.compaction };
  if (compaction) checkCompactionPolicy(compaction);
  switch (scheme) {
    case 'memory':
      return new MemoryStorage({ compaction });
    case 'sqlite':
      return SqliteStorage.open(location, { compaction });
    case 'etcd':
      return new EtcdStorage(location, { ...opts.etcd, compaction });
  }
}
