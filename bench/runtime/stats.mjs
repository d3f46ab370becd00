/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(values) {
  if (values.length === 0) return NaN;
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}
