/**
 * Kubernetes' CEL lists library (k8s.io/apiserver/pkg/cel/library/lists.go) over @bufbuild/cel:
 * `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)`, `lastIndexOf(x)` on lists of comparable
 * values (ints, doubles, strings). Errors are Kubernetes' own words.
 */
import { isDeepStrictEqual } from 'node:util';
import { celMethod, CelScalar, listType, type CelFunc, type CelList } from '@bufbuild/cel';

const LIST = listType(CelScalar.DYN);
type Comparable = bigint | number | string;

const items = (list: CelList): unknown[] => [...list];
const less = (a: unknown, b: unknown): boolean => (a as Comparable) < (b as Comparable);

function isSorted(this: CelList): boolean {
  const xs = items(this);
  return xs.every((x, i) => i === 0 || !less(x, xs[i - 1]));
}

function sum(this: CelList): bigint | number {
  const xs = items(this) as (bigint | number)[];
  if (xs.length === 0) return 0n;
  return xs.reduce((a, b) => (typeof a === 'bigint' && typeof b === 'bigint' ? a + b : Number(a) + Number(b)));
}

const extreme = (name: string, pick: (a: unknown, b: unknown) => boolean) =>
  function (this: CelList): Comparable {
    const xs = items(this);
    if (xs.length === 0) throw new Error(`${name} called on empty list`);
    return xs.reduce((a, b) => (pick(b, a) ? b : a)) as Comparable;
  };

function indexOf(this: CelList, x: unknown): bigint {
  return BigInt(items(this).findIndex((y) => isDeepStrictEqual(y, x)));
}

function lastIndexOf(this: CelList, x: unknown): bigint {
  return BigInt(items(this).findLastIndex((y) => isDeepStrictEqual(y, x)));
}

export const listFunctions: CelFunc[] = [
  celMethod('isSorted', LIST, [], CelScalar.BOOL, isSorted),
  celMethod('sum', LIST, [], CelScalar.DYN, sum),
  celMethod('min', LIST, [], CelScalar.DYN, extreme('min', less)),
  celMethod('max', LIST, [], CelScalar.DYN, extreme('max', (a, b) => less(b, a))),
  celMethod('indexOf', LIST, [CelScalar.DYN], CelScalar.INT, indexOf),
  celMethod('lastIndexOf', LIST, [CelScalar.DYN], CelScalar.INT, lastIndexOf),
];
