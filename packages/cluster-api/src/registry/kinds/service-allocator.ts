/**
 * Service clusterIPs from a range (kube-apiserver's --service-cluster-ip-range, default 10.96.0.0/12)
 * and nodePorts from 30000-32767. Every value in use is a storage key created with the Service, so the storage's create-if-absent
 * makes them unique even under concurrent creates and across restarts.
 */
import type { KubeObject } from '../../api/meta.js';
import { isStorageError } from '../../storage/errors.js';
import type { Storage } from '../../storage/interface.js';
import { objectKey } from '../../storage/keys.js';
import type { Allocator } from '../definition.js';
import { invalid } from '../../api/errors.js';
import { invalidValue } from '../generic/validation.js';
import { arr, child, obj, str, type Obj } from './common.js';

export const ServiceCIDR = '10.96.0.0/12';
/** .0 is the network, .1 is kept for the `kubernetes` Service as kube-apiserver does, the last is broadcast. */
const FirstIP = 2;
const NodePorts = { first: 30000, last: 32767 } as const;

export const toIP = (n: number): string => [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
export const fromIP = (ip: string): number | undefined => {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!m || m.slice(1).some((p) => Number(p) > 255)) return undefined;
  return m.slice(1).reduce((n, p) => n * 256 + Number(p), 0);
};

/** An IPv4 CIDR as its first address and size; undefined when `cidr` is not one (or too small to hold a Service). */
export const parseRange = (cidr: string): { cidr: string; base: number; count: number } | undefined => {
  const [ip = '', bits = '', extra] = cidr.split('/');
  const n = fromIP(ip);
  const prefix = /^\d{1,2}$/.test(bits) ? Number(bits) : NaN;
  if (n === undefined || extra !== undefined || !(prefix >= 1 && prefix <= 30)) return undefined;
  const count = 2 ** (32 - prefix);
  return { cidr, base: n - (n % count), count };
};

/** Whether two IPv4 CIDRs share an address (both must parse). */
export const rangesOverlap = (a: string, b: string): boolean => {
  const [x, y] = [parseRange(a)!, parseRange(b)!];
  return x.base < y.base + y.count && y.base < x.base + x.count;
};

type Pool = 'serviceips' | 'servicenodeports';
type Undo = () => Promise<void>;

const reserve = async (storage: Storage, pool: Pool, value: string, uid: string): Promise<Undo | undefined> => {
  const key = objectKey(pool, undefined, value);
  try {
    await storage.create(key, new TextEncoder().encode(uid));
  } catch (err) {
    if (isStorageError(err, 'KeyExists')) return undefined;
    throw err;
  }
  return () => storage.delete(key).then(() => undefined, (e: unknown) => { if (!isStorageError(e, 'KeyNotFound')) throw e; });
};

const reject = (o: KubeObject, field: string, value: unknown, why: string) => {
  const e = invalidValue(field, value, why);
  return invalid('Service', '', o.metadata.name ?? '', [{ reason: e.type, message: e.message, field: e.field }]);
};

/** Reserve `asked`, or a random free value when it is empty. */
const claim = async (storage: Storage, pool: Pool, uid: string, asked: string, random: () => string): Promise<[string, Undo | undefined]> => {
  if (asked) return [asked, await reserve(storage, pool, asked, uid)];
  for (let i = 0; i < 64; i++) {
    const candidate = random();
    const undo = await reserve(storage, pool, candidate, uid);
    if (undo) return [candidate, undo];
  }
  return ['', undefined];
};

export const wantsIP = (o: KubeObject): boolean => str(obj(o.spec).type) !== 'ExternalName' && str(obj(o.spec).clusterIP) !== 'None';
export const wantsNodePorts = (o: KubeObject): boolean => ['NodePort', 'LoadBalancer'].includes(str(obj(o.spec).type));
type Range = NonNullable<ReturnType<typeof parseRange>>;
const randomIP = (r: Range) => () => toIP(r.base + FirstIP + Math.floor(Math.random() * (r.count - FirstIP - 1)));
const randomPort = () => String(NodePorts.first + Math.floor(Math.random() * (NodePorts.last - NodePorts.first + 1)));

/** The pool keys a Service holds: its clusterIP and its node ports. */
const held = (o: KubeObject): Set<string> => {
  const spec = obj(o.spec);
  const out = new Set<string>();
  if (wantsIP(o) && str(spec.clusterIP)) out.add(`serviceips/${str(spec.clusterIP)}`);
  if (wantsNodePorts(o)) for (const p of arr(spec.ports).map(obj)) if (p.nodePort) out.add(`servicenodeports/${String(p.nodePort)}`);
  return out;
};

const allocateIP = async (o: KubeObject, spec: Obj, storage: Storage, range: Range): Promise<Undo> => {
  const asked = str(spec.clusterIP);
  const n = asked ? fromIP(asked) : undefined;
  if (asked && n === undefined) throw reject(o, 'spec.clusterIP', asked, 'must be a valid IP address, (e.g. 10.9.8.7)');
  if (n !== undefined && (n - range.base < 1 || n - range.base >= range.count - 1)) {
    throw reject(o, 'spec.clusterIP', asked, `provided IP is not in the valid range. The range of valid IPs is ${range.cidr}`);
  }
  const [ip, undo] = await claim(storage, 'serviceips', o.metadata.uid ?? '', asked, randomIP(range));
  if (!undo) throw reject(o, 'spec.clusterIP', asked, asked ? 'provided IP is already allocated' : 'range is full');
  spec.clusterIP = ip;
  return undo;
};

const allocatePort = async (o: KubeObject, port: Obj, at: string, storage: Storage): Promise<Undo> => {
  const asked = port.nodePort === undefined || port.nodePort === null || port.nodePort === 0 ? '' : String(port.nodePort);
  if (asked && !(Number(asked) >= NodePorts.first && Number(asked) <= NodePorts.last)) {
    throw reject(o, at, port.nodePort, `provided port is not in the valid range. The range of valid ports is ${NodePorts.first}-${NodePorts.last}`);
  }
  const [value, undo] = await claim(storage, 'servicenodeports', o.metadata.uid ?? '', asked, randomPort);
  if (!undo) throw reject(o, at, port.nodePort ?? 0, asked ? 'provided port is already allocated' : 'range is full');
  port.nodePort = Number(value);
  return undo;
};

const undoAll = (undos: Undo[]): Undo => async () => {
  for (const u of undos.reverse()) await u();
};

/** Fill in and reserve every value `o` needs that is not already in `keep` (what the stored object holds). */
const fill = async (o: KubeObject, storage: Storage, keep: Set<string>, range: Range): Promise<Undo> => {
  const spec = child(o, 'spec');
  const undos: Undo[] = [];
  try {
    if (wantsIP(o) && !keep.has(`serviceips/${str(spec.clusterIP)}`)) undos.push(await allocateIP(o, spec, storage, range));
    if (wantsNodePorts(o)) {
      const ports = arr(spec.ports).map(obj);
      for (let i = 0; i < ports.length; i++) {
        if (ports[i]!.nodePort && keep.has(`servicenodeports/${String(ports[i]!.nodePort)}`)) continue;
        undos.push(await allocatePort(o, ports[i]!, `spec.ports[${i}].nodePort`, storage));
      }
    }
  } catch (err) {
    await undoAll(undos)();
    throw err;
  }
  return undoAll(undos);
};

const releaseAll = async (storage: Storage, keys: Iterable<string>): Promise<void> => {
  for (const k of keys) {
    const [pool, value] = k.split('/') as [Pool, string];
    await storage.delete(objectKey(pool, undefined, value)).catch((e: unknown) => { if (!isStorageError(e, 'KeyNotFound')) throw e; });
  }
};

/** The allocator for clusterIPs of `cidr` (an IPv4 CIDR, checked by whoever configures it). */
export const serviceAllocator = (cidr = ServiceCIDR): Allocator => {
  const range = parseRange(cidr);
  if (!range) throw new Error(`service cluster IP range ${cidr} is not an IPv4 CIDR`);
  return {
    allocate: (o, storage) => fill(o, storage, new Set(), range),
    async reallocate(o, old, storage) {
      const before = held(old);
      const undo = await fill(o, storage, before, range);
      const after = held(o);
      return { undo, commit: () => releaseAll(storage, [...before].filter((k) => !after.has(k))) };
    },
    release: (o, storage) => releaseAll(storage, held(o)),
  };
};
