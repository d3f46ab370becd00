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
