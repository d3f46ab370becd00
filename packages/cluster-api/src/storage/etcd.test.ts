import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from './etcd.js';
import { isStorageError } from './errors.js';
import { storageConformance } from './testing/conformance.js';
import { startEtcd, type EtcdCluster } from './testing/etcd-cluster.js';
import { expectError, Recorder, uniqueRoot } from './testing/suite-helpers.js';

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
