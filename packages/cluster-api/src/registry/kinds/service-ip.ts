/**
 * ClusterIP allocation from 10.96.0.0/12 (kube-apiserver's default service CIDR). Each IP in use is a
 * storage key created with the Service, so the storage's create-if-absent makes IPs unique even under
 * concurrent creates and across restarts.
 */
import type { KubeObject } from '../../api/meta.js';
import { isStorageError } from '../../storage/errors.js';
import type { Storage } from '../../storage/interface.js';
import { objectKey } from '../../storage/keys.js';
import type { Allocator } from '../definition.js';
import { invalid } from '../errors.js';
import { invalidValue } from '../validation.js';
import { child, obj, str } from './common.js';

export const ServiceCIDR = '10.96.0.0/12';
const Base = (10 << 24) | (96 << 16);
const Size = 1 << 20;
/** .0 is the network; .1 is kept for the `kubernetes` Service, as kube-apiserver does; the last is broadcast. */
const First = 2;

const toIP = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
const fromIP = (ip: string): number | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m || m.slice(1).some((p) => Number(p) > 255)) return undefined;
  return m.slice(1).reduce((n, p) => n * 256 + Number(p), 0);
};

const ipKey = (ip: string): string => objectKey('serviceips', undefined, ip);

const reject = (o: KubeObject, ip: string, why: string) => {
  const e = invalidValue('spec.clusterIP', ip, why);
  return invalid('Service', '', o.metadata.name ?? '', [{ reason: e.type, message: e.message, field: e.field }]);
};

const reserve = async (storage: Storage, ip: string, uid: string): Promise<boolean> => {
  try {
    await storage.create(ipKey(ip), new TextEncoder().encode(uid));
    return true;
  } catch (err) {
    if (isStorageError(err, 'KeyExists')) return false;
    throw err;
  }
};

const wantsIP = (o: KubeObject): boolean => str(obj(o.spec).type) !== 'ExternalName' && str(obj(o.spec).clusterIP) !== 'None';

export const clusterIPs: Allocator = {
  async allocate(o, storage) {
    if (!wantsIP(o)) return async () => {};
    const spec = child(o, 'spec');
    const asked = str(spec.clusterIP);
    const uid = o.metadata.uid ?? '';
    if (asked) {
      const n = fromIP(asked);
      if (n === undefined) throw reject(o, asked, 'must be a valid IP address, (e.g. 10.9.8.7)');
      const off = n - (Base >>> 0);
      if (off < 1 || off >= Size - 1) throw reject(o, asked, `provided IP is not in the valid range. The range of valid IPs is ${ServiceCIDR}`);
      if (!(await reserve(storage, asked, uid))) throw reject(o, asked, 'provided IP is already allocated');
    } else {
      let ip = '';
      for (let i = 0; i < 64 && !ip; i++) {
        const candidate = toIP((Base >>> 0) + First + Math.floor(Math.random() * (Size - First - 1)));
        if (await reserve(storage, candidate, uid)) ip = candidate;
      }
      if (!ip) throw reject(o, '', 'range is full');
      spec.clusterIP = ip;
    }
    const ip = str(spec.clusterIP);
    return () => release(storage, ip);
  },
  async release(o, storage) {
    if (wantsIP(o)) await release(storage, str(obj(o.spec).clusterIP));
  },
};

const release = async (storage: Storage, ip: string): Promise<void> => {
  if (!ip) return;
  await storage.delete(ipKey(ip)).catch((err: unknown) => {
    if (!isStorageError(err, 'KeyNotFound')) throw err;
  });
};
