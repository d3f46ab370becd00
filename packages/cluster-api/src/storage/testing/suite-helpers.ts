/** Shared helpers of the storage conformance suite (conformance.ts). */
import { expect } from 'vitest';
import { isStorageError, type StorageError, type StorageErrorCode } from '../errors.js';
import type { Storage, StorageEvent, Watch, WatchOptions } from '../interface.js';
import { until } from '../../../testing/src/poll.js';

export type StorageFactory = () => Promise<Storage>;

/** Opens stores for one test and closes them all afterwards (close() must be idempotent). */
export class Stores {
  private readonly open: Storage[] = [];
  constructor(private readonly factory: StorageFactory) {}

  async get(): Promise<Storage> {
    const s = await this.factory();
    this.open.push(s);
    return s;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.open.splice(0).map((s) => s.close()));
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const enc = (s: string): Uint8Array => encoder.encode(s);
export const dec = (b: Uint8Array): string => decoder.decode(b);

let counter = 0;
/**
 * A resource segment no other test uses, so the suite also runs against a shared store (one etcd
 * cluster for every test) without tests seeing each other's keys.
 */
export function uniqueRoot(): string {
  counter += 1;
  return `/registry/t${counter}x${Math.random().toString(36).slice(2, 8)}/`;
}

export async function expectError(p: Promise<unknown>, code: StorageErrorCode, revision?: number): Promise<StorageError> {
  const err = await p.then(
    (v) => {
      throw new Error(`expected StorageError ${code}, got a result: ${JSON.stringify(v)}`);
    },
    (e: unknown) => e,
  );
  expect(isStorageError(err), `expected a StorageError, got ${String(err)}`).toBe(true);
  const se = err as StorageError;
  expect(se.code).toBe(code);
  if (revision !== undefined) expect(se.revision).toBe(revision);
  return se;
}

/** Records everything a watch delivers and checks batch ordering as it goes. */
export class Recorder {
  readonly events: StorageEvent[] = [];
  error: Error | undefined;
  batchOrderOk = true;
  readonly watch: Watch;

  constructor(storage: Storage, opts: WatchOptions) {
    this.watch = storage.watch(opts, {
      onEvents: (batch) => {
        for (const ev of batch) {
          const last = this.events.at(-1);
          if (last && ev.revision <= last.revision) this.batchOrderOk = false;
          this.events.push(ev);
        }
      },
      onError: (err) => {
        this.error = err;
      },
    });
  }

  get revisions(): number[] {
    return this.events.map((e) => e.revision);
  }

  async waitForRevision(rev: number): Promise<void> {
    await until(`event ${rev}`, () => (this.events.at(-1)?.revision ?? 0) >= rev || this.error !== undefined, { timeoutMs: 10_000 });
    expect(this.error).toBeUndefined();
  }

  async waitForError(): Promise<Error> {
    await until('a watch error', () => this.error !== undefined, { timeoutMs: 10_000 });
    return this.error!;
  }

  /** Lets queued deliveries run, to show that nothing more arrives. */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 5));
  }
}
