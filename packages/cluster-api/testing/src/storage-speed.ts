/**
 * Raw storage speed, for bench/cluster-api to print beside the API's own numbers (the ratio is the
 * API's overhead). Not a test: it asserts nothing and prints nothing. The bench imports the build,
 * testing/dist/storage-speed.js.
 *
 *   const storage = await openStorage('sqlite:/tmp/x.db', { compaction: false });
 *   console.table(await measureStorage(storage, { n: 10_000 }));
 */
import { performance } from 'node:perf_hooks';
import type { Storage } from '../../dist/storage/interface.js';

export interface MeasureOptions {
  /** Objects to create (and then get and list). */
  readonly n: number;
  /** Bytes per value; default 2048 (a typical Pod). */
  readonly valueBytes?: number;
  /** Operations in flight at once; default 50 (the API bench's client count). */
  readonly concurrency?: number;
  /** Page size of the paged list; default 500. */
  readonly pageSize?: number;
  /** Timed repetitions of each list; the median is reported. Default 5. */
  readonly listRounds?: number;
  /** Key prefix to write under; default a fresh `/registry/speed-<random>/bench/`. */
  readonly prefix?: string;
}

export interface StorageSpeed {
  readonly n: number;
  readonly valueBytes: number;
  readonly createsPerSec: number;
  readonly getsPerSec: number;
  /** Median ms to list all n objects in one call. */
  readonly listAllMs: number;
  /** Median ms to list all n objects in pages of pageSize, at one revision. */
  readonly listPagedMs: number;
  readonly pageSize: number;
}

/** A Pod-like JSON document of exactly `bytes` bytes (padding in an annotation). */
export function sampleValue(name: string, bytes: number): Uint8Array {
  const doc = { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'bench', annotations: { pad: '' } } };
  const base = JSON.stringify(doc).length;
  doc.metadata.annotations.pad = 'x'.repeat(Math.max(0, bytes - base));
  return new TextEncoder().encode(JSON.stringify(doc));
}

async function inParallel(n: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const start = performance.now();
  const worker = async (): Promise<void> => {
    while (next < n) await op(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return performance.now() - start;
}

async function median(rounds: number, fn: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

export async function measureStorage(storage: Storage, opts: MeasureOptions): Promise<StorageSpeed> {
  const { n, valueBytes = 2048, concurrency = 50, pageSize = 500, listRounds = 5 } = opts;
  const prefix = opts.prefix ?? `/registry/speed-${Math.random().toString(36).slice(2, 8)}/bench/`;
  const keys = Array.from({ length: n }, (_, i) => `${prefix}pod-${String(i).padStart(6, '0')}`);
  const values = keys.map((k) => sampleValue(k, valueBytes));
  const createMs = await inParallel(n, concurrency, (i) => storage.create(keys[i]!, values[i]!));
  const getMs = await inParallel(n, concurrency, async (i) => {
    if (!(await storage.get(keys[i]!))) throw new Error(`measureStorage: ${keys[i]} vanished`);
  });
  const listAllMs = await median(listRounds, async () => {
    const res = await storage.list({ prefix });
    if (res.items.length !== n) throw new Error(`measureStorage: listed ${res.items.length} of ${n}`);
  });
  const listPagedMs = await median(listRounds, async () => {
    let seen = 0;
    let page = await storage.list({ prefix, limit: pageSize });
    for (seen += page.items.length; page.more; seen += page.items.length) {
      page = await storage.list({ prefix, limit: pageSize, revision: page.revision, startAfter: page.items.at(-1)!.key });
    }
    if (seen !== n) throw new Error(`measureStorage: paged ${seen} of ${n}`);
  });
  const perSec = (ms: number): number => Math.round((n / ms) * 1000);
  return { n, valueBytes, createsPerSec: perSec(createMs), getsPerSec: perSec(getMs), listAllMs, listPagedMs, pageSize };
}
