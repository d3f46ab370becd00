/**
 * apimachinery's equality.Semantic.DeepDerivative: whether `current` has every field `desired`
 * sets, with equal values; fields `desired` leaves unset (zero) are not compared, and a list may be
 * longer in `current` than in `desired` (what the API server defaulted, what a binding appended).
 */
export function derivative(desired: unknown, current: unknown): boolean {
  if (desired === undefined || desired === null || desired === '' || desired === 0 || desired === false) return true;
  if (Array.isArray(desired)) {
    if (desired.length === 0) return true;
    return Array.isArray(current) && current.length >= desired.length && desired.every((d, i) => derivative(d, current[i]));
  }
  if (typeof desired === 'object') {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return false;
    return Object.entries(desired).every(([k, v]) => derivative(v, (current as Record<string, unknown>)[k]));
  }
  return desired === current;
}
