/**
 * Read coalescing for the etcd backend: latest-revision gets issued in the same event-loop turn go
 * to etcd as one read-only transaction (one Range per key) instead of one RPC each.
 *
 * Why: each unary gRPC call costs the API server ~0.4 ms of CPU (HTTP/2 framing, protobuf,
 * promises), and under load every namespaced create also reads its namespace — so per-call
 * overhead, not etcd, was the API's ceiling (bench/cluster-api/ETCD.md). SQLite groups writes the
 * same way (sqlite/batch.ts).
 *
 * Semantics are unchanged: etcd serves a read-only transaction linearizably at one revision taken
 * after every coalesced get was issued, so each get still sees every write acknowledged before it
 * was called. Gets at an explicit revision are not coalesced (a compacted one must fail alone).
 */
import type { IKeyValue } from 'etcd3';

/** etcd's default --max-txn-ops: more operations per transaction are refused. */
export const MAX_TXN_OPS = 128;

interface Pending {
  readonly key: Buffer;
  resolve(kv: IKeyValue | undefined): void;
  reject(err: unknown): void;
}

export class GetBatcher {
  private queue: Pending[] = [];
  private scheduled = false;

  /** `read(keys)` returns each key's current KeyValue (or undefined), in order, in one round trip. */
  constructor(private readonly read: (keys: Buffer[]) => Promise<(IKeyValue | undefined)[]>) {}

  get(key: Buffer): Promise<IKeyValue | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      // After the I/O of this loop turn: every request parsed in it has issued its gets by then.
      setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.queue;
    this.queue = [];
    for (let i = 0; i < all.length; i += MAX_TXN_OPS) {
      const batch = all.slice(i, i + MAX_TXN_OPS);
      this.read(batch.map((p) => p.key)).then(
        (kvs) => batch.forEach((p, j) => p.resolve(kvs[j])),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
    }
  }
}
