/**
 * resource.Quantity as numbers: what the scheduler sums against a node's allocatable and what the
 * node agent reports as capacity and hands to resourceFieldRef. CPU is counted in millicores and
 * everything else in units, as kube-scheduler's Resource does (MilliCPU, Memory, EphemeralStorage).
 */

const Binary: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const Decimal: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const Pattern = /^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** The value of a quantity (`"500m"` → 0.5, `"1Gi"` → 1073741824); undefined when it does not parse. */
export function parseQuantity(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) ? q : undefined;
  if (typeof q !== 'string') return undefined;
  const m = Pattern.exec(q.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const suffix = m[2] ?? '';
  if (suffix in Binary) return n * Binary[suffix]!;
  if (suffix in Decimal) return n * Decimal[suffix]!;
  return n * 10 ** Number(suffix.slice(1));
}

/** A resource's amount as the scheduler counts it: millicores for `cpu`, rounded up as Quantity.MilliValue does. */
export function resourceAmount(resource: string, q: unknown): number {
  const v = parseQuantity(q) ?? 0;
  return resource === 'cpu' ? Math.ceil(Math.round(v * 1e9) / 1e6) : Math.ceil(v);
}

/** Bytes as Kubernetes prints a node's memory capacity (`16318552Ki`). */
export const kibibytes = (bytes: number): string => `${Math.floor(bytes / 1024)}Ki`;

/**
 * A quantity exactly, for sums and comparisons that must not drift (quota usage, limit ranges): its
 * value in thousandths, rounded up as Quantity.MilliValue rounds, and whether it was written with a
 * binary suffix (`Mi`), which decides how a sum of it prints.
 */
export interface Amount {
  milli: bigint;
  binary: boolean;
}

const Exponent: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const Power1024: Record<string, bigint> = { Ki: 1n, Mi: 2n, Gi: 3n, Ti: 4n, Pi: 5n, Ei: 6n };

/** `"1.5Gi"` → 1610612736000 thousandths, binary; undefined when it does not parse. */
export function parseAmount(q: unknown): Amount | undefined {
  const text = typeof q === 'number' && Number.isFinite(q) ? String(q) : q;
  if (typeof text !== 'string') return undefined;
  const m = Pattern.exec(text.trim());
  if (!m) return undefined;
  const [whole = '', fraction = ''] = m[1]!.replace(/^[+-]/, '').split('.');
  const negative = m[1]!.startsWith('-');
  const suffix = m[2] ?? '';
  // The number as digits × 10^exp, then scaled by the suffix, then to thousandths rounded up.
  let digits = BigInt(`${whole}${fraction}` || '0');
  let exp = -fraction.length + 3;
  if (suffix in Power1024) digits *= 1024n ** Power1024[suffix]!;
  else exp += suffix in Exponent ? Exponent[suffix]! : Number(suffix.slice(1));
  if (Math.abs(exp) > 40) return undefined;
  let milli: bigint;
  if (exp >= 0) milli = digits * 10n ** BigInt(exp);
  else {
    const div = 10n ** BigInt(-exp);
    milli = digits / div + (digits % div === 0n ? 0n : 1n);
  }
  return { milli: negative ? -milli : milli, binary: suffix in Power1024 };
}

/** An amount as Quantity.String() prints it canonically: `500m`, `2`, `1500`, `3k`, `1Gi`, `1536Mi`. */
export function formatAmount({ milli, binary }: Amount): string {
  if (milli === 0n) return '0';
  if (milli % 1000n !== 0n) return `${milli}m`;
  let v = milli / 1000n;
  const abs = v < 0n ? -v : v;
  if (binary && abs >= 1024n) {
    const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
    let i = 0;
    while (i < 6 && v % 1024n === 0n) (v /= 1024n), i++;
    return `${v}${suffixes[i]}`;
  }
  const suffixes = ['', 'k', 'M', 'G', 'T', 'P', 'E'];
  let i = 0;
  while (i < 6 && v % 1000n === 0n) (v /= 1000n), i++;
  return `${v}${suffixes[i]}`;
}

/** A quantity in its canonical form (`2048Mi` → `2Gi`); the text itself when it does not parse. */
export const canonicalQuantity = (q: unknown): string => {
  const a = parseAmount(q);
  return a ? formatAmount(a) : String(q);
};
