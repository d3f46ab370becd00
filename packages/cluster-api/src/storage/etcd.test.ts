import { existsSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { EtcdStorage } from './etcd.js';
import { storageConformance } from './testing/conformance.js';
import { startEtcd, type EtcdCluster } from './testing/etcd-cluster.js';

// Conformance does not measure durability: member data on tmpfs when the machine has one.
const dataRoot = existsSync('/dev/shm') ? '/dev/shm' : undefined;
let etcd: EtcdCluster;

beforeAll(async () => {
  etcd = await startEtcd({ members: 1, dataRoot });
});
afterAll(async () => {
  await etcd?.stop();
});

storageConformance('etcd (one real member)', async () => new EtcdStorage(etcd.url.slice('etcd:'.length)));
