// Statistics every bench prints: the median, percentiles, and the median time of repeated rounds.
import { performance } from 'node:perf_hooks';

/** Median of a list (mean of the middle two for an even count; NaN when empty). */
export function median(values) {
  if (values.length === 0) return Number.NaN;
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** The p-th percentile (0–100) by nearest rank, of values in any order (NaN when empty). */
export function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor((p / 100) * v.length))];
}

/**
 * Median time (ms) of `rounds` runs of `fn`, each timed from its call to its result; `check` looks at
 * what it returned afterwards, off the clock.
 */
export async function medianTime(rounds, fn, check = () => undefined) {
  const times = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    const out = await fn();
    times.push(performance.now() - start);
    check(out);
  }
  return median(times);
}
