/**
 * Watch resumption on a real etcd: the member serving a watch dies and comes back; the watch carries
 * on from the last delivered revision — changes made meanwhile are replayed, none is doubled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdStorage } from './etcd.js';
import { isStorageError } from '../errors.js';
import { startEtcd, type EtcdCluster } from '../../../testing/src/etcd-cluster.js';
import { Recorder } from '../testing/suite-helpers.js';
import { until } from '../../../testing/src/poll.js';

const enc = (s: string) => new TextEncoder().encode(s);
let etcd: EtcdCluster;

beforeAll(async () => {
  etcd = await startEtcd({ members: 3 });
});
afterAll(async () => {
  await etcd?.stop();
});

describe('etcd watch across member failures', () => {
  it('resumes on another member after each member in turn is killed and restarted, losing and repeating nothing', async () => {
    const writer = new EtcdStorage(etcd.url.slice('etcd:'.length));
    const watcher = new EtcdStorage(etcd.url.slice('etcd:'.length));
    try {
      const from = await writer.currentRevision();
      const rec = new Recorder(watcher, { key: '/registry/resume/', prefix: true, afterRevision: from });
      const revisions: number[] = [];
      const write = async (name: string) => {
        const deadline = Date.now() + 15_000;
        for (;;) {
          try {
            revisions.push((await writer.create(`/registry/resume/ns/${name}`, enc(name))).modRevision);
            return;
          } catch (err) {
            if (!isStorageError(err, 'Unavailable') || Date.now() > deadline) throw err;
          }
        }
      };
      for (let m = 0; m < 3; m++) {
        for (let i = 0; i < 5; i++) await write(`before-${m}-${i}`);
        await etcd.kill(m);
        for (let i = 0; i < 5; i++) await write(`during-${m}-${i}`);
        await etcd.restart(m);
      }
      await write('last');
      await until('the last write', () => (rec.events.at(-1)?.revision ?? 0) >= revisions.at(-1)!, { timeoutMs: 20_000 });
      expect(rec.error).toBeUndefined();
      expect(rec.revisions).toEqual(revisions);
      expect(rec.batchOrderOk).toBe(true);
      rec.watch.close();
    } finally {
      await Promise.all([writer.close(), watcher.close()]);
    }
  });
});
