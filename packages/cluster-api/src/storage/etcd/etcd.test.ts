import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from './etcd.js';
import { isStorageError } from '../errors.js';
import { storageConformance } from '../testing/conformance.js';
import { startEtcd, type EtcdCluster } from '../../../testing/src/etcd-cluster.js';
import { expectError, Recorder, uniqueRoot } from '../testing/suite-helpers.js';

// Conformance does not measure durability: member data on tmpfs when the machine has one.
const dataRoot = existsSync('/dev/shm') ? '/dev/shm' : undefined;
let etcd: EtcdCluster;
const open = () => new EtcdStorage(etcd.url.slice('etcd:'.length));

beforeAll(async () => {
  etcd = await startEtcd({ members: 1, dataRoot });
});
afterAll(async () => {
  await etcd?.stop();
});

storageConformance('etcd (one real member)', async () => open());

describe('etcd: coalesced reads', () => {
  it('hundreds of concurrent gets (more than one transaction holds) each see their own key, present or absent', async () => {
    const s = open();
    try {
      const root = uniqueRoot();
      const keys = Array.from({ length: 300 }, (_, i) => `${root}ns/k${i}`);
      await Promise.all(keys.filter((_, i) => i % 3 !== 0).map((k) => s.create(k, new TextEncoder().encode(k))));
      const got = await Promise.all(keys.map((k) => s.get(k)));
      got.forEach((kv, i) => expect(kv && new TextDecoder().decode(kv.value)).toBe(i % 3 === 0 ? undefined : keys[i]));
      // A get issued after a write was acknowledged sees it, whatever else is coalesced with it.
      const last = await s.create(`${root}ns/late`, new TextEncoder().encode('late'));
      const [late] = await Promise.all([s.get(`${root}ns/late`), ...keys.map((k) => s.get(k))]);
      expect(late?.modRevision).toBe(last.modRevision);
    } finally {
      await s.close();
    }
  });
});

describe('etcd: compaction done by another API server', () => {
  it('reads, watches and compact() learn the compacted revision from etcd itself', async () => {
    const [a, b] = [open(), open()];
    try {
      const key = `${uniqueRoot()}ns/a`;
      const v1 = await a.create(key, new TextEncoder().encode('1'));
      const v2 = await a.update(key, new TextEncoder().encode('2'), v1.modRevision);
      await a.update(key, new TextEncoder().encode('3'), v2.modRevision);
      expect(await a.compact(v2.modRevision)).toBe(v2.modRevision);
      // b never compacted: etcd's refusal tells it how far history goes.
      await expectError(b.get(key, { revision: v1.modRevision }), 'Compacted', v2.modRevision);
      const rec = new Recorder(b, { key, prefix: false, afterRevision: v1.modRevision });
      const err = await rec.waitForError();
      expect(isStorageError(err, 'Compacted')).toBe(true);
      expect((err as { revision?: number }).revision).toBe(v2.modRevision);
      expect(await b.compactedRevision()).toBe(v2.modRevision);
      expect(await b.compact(v1.modRevision)).toBe(v2.modRevision);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
