/**
 * The newest committed state of recently used keys, in memory, for the SQLite backend.
 *
 * Sound only because this process is the file's only writer (locking_mode=EXCLUSIVE): every change
 * passes through `committed`, so an entry can never be stale. A read at the committed revision is then
 * a map lookup instead of an index walk, and the writer's own existence and compare-and-swap checks
 * skip the database as well. An entry is the key's newest committed row (a tombstone if it was
 * deleted); `null` records a key with no row at all.
 *
 * Bounded by the bytes it holds; the oldest entries (in insertion order) go first. While it holds every
 * key of the file (it was empty or fitted when opened, and nothing was evicted since),
 * a key it does not hold has no row: a create of a new key then never asks the database.
 */
import type { Head } from './log.js';

/** Bookkeeping per entry besides the key and value bytes (Map slot, object, Buffer header). */
const ENTRY_OVERHEAD = 96;

export const DEFAULT_HEAD_CACHE_BYTES = 64 * 1024 * 1024;

export class HeadCache {
  private readonly entries = new Map<string, Head | null>();
  private bytes = 0;
  private holdsAll = false;
  private evicted = false;

  constructor(private readonly maxBytes: number = DEFAULT_HEAD_CACHE_BYTES) {}

  /** The cached newest row of `key`, `null` if it has none, `undefined` if not known. */
  get(key: string): Head | null | undefined {
    const head = this.entries.get(key);
    return head === undefined && this.holdsAll ? null : head;
  }

  /**
   * Fills the empty cache with every key's newest row (`rows` lazily read: it stops at the first
   * eviction, so a file larger than the cache costs no more than the cache's size to read).
   */
  fill(rows: () => Iterable<Head>): void {
    if (this.maxBytes <= 0) return;
    for (const row of rows()) {
      this.set(row.name, row);
      if (this.evicted) return;
    }
    this.holdsAll = true;
  }

  set(key: string, kv: Head | null): void {
    if (this.maxBytes <= 0) return;
    this.drop(key);
    // No row is what a complete cache says of any key it lacks.
    if (kv === null && this.holdsAll) return;
    this.entries.set(key, kv);
    this.bytes += sizeOf(key, kv);
    if (this.bytes > this.maxBytes) this.evict();
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
    this.holdsAll = false;
  }

  private drop(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.bytes -= sizeOf(key, old);
  }

  private evict(): void {
    this.evicted = true;
    this.holdsAll = false;
    for (const key of this.entries.keys()) {
      if (this.bytes <= this.maxBytes * 0.9) break;
      this.drop(key);
    }
  }
}

const sizeOf = (key: string, kv: Head | null): number => key.length + ENTRY_OVERHEAD + (kv?.value ? kv.value.byteLength : 0);
