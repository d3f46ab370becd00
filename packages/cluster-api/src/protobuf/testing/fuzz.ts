/** Deterministic bytes for fuzz tests (mulberry32): a failing case names its seed and reproduces. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Up to `max` random bytes from `next`. */
export const randomBytes = (next: () => number, max: number): Buffer =>
  Buffer.from(Array.from({ length: Math.floor(next() * max) }, () => Math.floor(next() * 256)));
