/**
 * The per-namespace ranges SCC strategies draw from, as OpenShift's namespace security allocation
 * controller writes them: `openshift.io/sa.scc.uid-range` and `openshift.io/sa.scc.supplemental-groups`
 * (`<first>/<size>`, a block of 10000 ids in 1000000000–1999999999) and `openshift.io/sa.scc.mcs`
 * (an SELinux level with two categories, `s0:c1,c0`, one per block). A namespace gets the lowest
 * block no other namespace holds, when it is created or, if it has none yet, when a pod is first
 * judged in it. A malformed annotation is the pod's refusal, never a server error.
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import type { Services } from '../../registry/definition.js';
import type { RequestContext } from '../../registry/rest.js';

export const UidRangeAnnotation = 'openshift.io/sa.scc.uid-range';
export const SupplementalGroupsAnnotation = 'openshift.io/sa.scc.supplemental-groups';
export const McsAnnotation = 'openshift.io/sa.scc.mcs';

const First = 1_000_000_000;
const BlockSize = 10_000;
const Blocks = 100_000;

export interface IdRange {
  min: number;
  max: number;
}

/** `1000700000/10000` or `1000700000-1000709999` (OpenShift's uid.ParseBlock); the first block of a comma list. */
export const parseBlock = (value: string | undefined, annotation: string): IdRange => {
  if (value === undefined || value === '') throw new Error(`unable to find annotation ${annotation}`);
  const first = value.split(',')[0]!.trim();
  const sized = /^(\d+)\/(\d+)$/.exec(first);
  const spanned = /^(\d+)-(\d+)$/.exec(first);
  const range = sized ? { min: Number(sized[1]), max: Number(sized[1]) + Number(sized[2]) - 1 } : spanned ? { min: Number(spanned[1]), max: Number(spanned[2]) } : undefined;
  if (!range || !Number.isSafeInteger(range.max) || range.max < range.min || range.max > 2 ** 31 - 1) {
    throw new Error(`unable to parse annotation ${annotation}=${JSON.stringify(value)}: expected <first>/<size> or <first>-<last>`);
  }
  return range;
};

/** An SELinux level `s0:c1,c0` (the mcs annotation). */
export const parseMcs = (value: string | undefined): string => {
  if (value === undefined || value === '') throw new Error(`unable to find annotation ${McsAnnotation}`);
  if (!/^s\d+(-s\d+)?(:c\d+(\.c\d+)?(,c\d+(\.c\d+)?)*)?$/.test(value)) throw new Error(`unable to parse annotation ${McsAnnotation}=${JSON.stringify(value)}: expected an SELinux level such as s0:c1,c0`);
  return value;
};

/** The block-th pair of categories, larger first, in OpenShift's order (c1,c0; c2,c0; c2,c1; c3,c0 …). */
const mcsOf = (block: number): string => {
  let high = 1;
  while (((high + 1) * high) / 2 <= block) high++;
  return `s0:c${high},c${block - ((high - 1) * high) / 2}`;
};

export const rangeAnnotations = (block: number): Record<string, string> => ({
  [UidRangeAnnotation]: `${First + block * BlockSize}/${BlockSize}`,
  [SupplementalGroupsAnnotation]: `${First + block * BlockSize}/${BlockSize}`,
  [McsAnnotation]: mcsOf(block),
});

const blockOf = (ns: KubeObject): number | undefined => {
  const m = /^(\d+)\/(\d+)$/.exec(ns.metadata.annotations?.[UidRangeAnnotation] ?? '');
  if (!m || Number(m[2]) !== BlockSize) return undefined;
  const offset = Number(m[1]) - First;
  return offset >= 0 && offset % BlockSize === 0 ? offset / BlockSize : undefined;
};

/** The allocation is the server's own doing, whoever's request needed it. */
const Server: RequestContext = {};

/** One allocation at a time in this server: two namespaces created together get different blocks. */
let allocating: Promise<unknown> = Promise.resolve();

const freeBlock = async (services: Services): Promise<number> => {
  const list = await services.find('', 'v1', 'namespaces')!.list(Server, {});
  const used = new Set(list.items.map(blockOf).filter((b): b is number => b !== undefined));
  for (let b = 0; b < Blocks; b++) if (!used.has(b)) return b;
  throw new Error('no uid range left to allocate');
};

const serially = <T>(fn: () => Promise<T>): Promise<T> => {
  const run = allocating.then(fn, fn);
  allocating = run.catch(() => undefined);
  return run;
};

/** Namespace CREATE: the annotations a namespace lacks, from the lowest free block. */
export const annotateNew = (ns: KubeObject, services: Services): Promise<boolean> => {
  if (ns.metadata.annotations?.[UidRangeAnnotation] !== undefined) return Promise.resolve(false);
  return serially(async () => {
    ns.metadata.annotations = { ...rangeAnnotations(await freeBlock(services)), ...ns.metadata.annotations };
    return true;
  });
};

/** A namespace that has no ranges yet (created before allocation ran) gets them now; answers the namespace as it is. */
export const namespaceWithRanges = async (name: string, services: Services): Promise<KubeObject> => {
  const store = services.find('', 'v1', 'namespaces')!;
  const read = () => store.get(Server, name);
  const ns = await read();
  if (ns.metadata.annotations?.[UidRangeAnnotation] !== undefined || ns.metadata.deletionTimestamp) return ns;
  return serially(async () => {
    for (let attempt = 0; ; attempt++) {
      const fresh = await read();
      if (fresh.metadata.annotations?.[UidRangeAnnotation] !== undefined) return fresh;
      fresh.metadata.annotations = { ...rangeAnnotations(await freeBlock(services)), ...fresh.metadata.annotations };
      try {
        return (await store.update(Server, name, fresh)).object;
      } catch (err) {
        if (!isApiError(err) || err.code !== 409 || attempt >= 4) throw err;
      }
    }
  });
};
