/**
 * Template hashes and semantic equality, as the workload controllers use them to name what they make
 * (`pod-template-hash`, `controller-revision-hash`): controller.ComputeHash is FNV-32a over the
 * template (plus the collision count, 8 bytes little-endian), its decimal digits spelt in
 * rand.SafeEncodeString's alphabet. The template is hashed as canonical JSON (keys sorted), where
 * Kubernetes hashes its Go printing: the names look the same but differ from a real cluster's.
 */
import { isDeepStrictEqual } from 'node:util';

const Alphabet = 'bcdfghjklmnpqrstvwxz2456789';

/** Drops what Kubernetes' semantic equality does not tell apart from absent: null, empty lists and maps. */
export const normalized = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(normalized);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    const x = normalized((v as Record<string, unknown>)[k]);
    if (x === undefined || x === null) continue;
    if (Array.isArray(x) && x.length === 0) continue;
    if (typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length === 0) continue;
    out[k] = x;
  }
  return out;
};

/** apiequality.Semantic.DeepEqual, as far as objects decoded from JSON go (at the top too: an absent list is an empty one). */
export const semanticEqual = (a: unknown, b: unknown): boolean => isDeepStrictEqual(normalized({ v: a }), normalized({ v: b }));

const fnv32a = (bytes: Uint8Array, h = 0x811c9dc5): number => {
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h >>> 0;
};

export const computeHash = (template: unknown, collisionCount?: number): string => {
  let h = fnv32a(Buffer.from(JSON.stringify(normalized(template))));
  if (collisionCount !== undefined) {
    const extra = Buffer.alloc(8);
    extra.writeUInt32LE(collisionCount >>> 0, 0);
    h = fnv32a(extra, h);
  }
  return [...String(h)].map((c) => Alphabet[c.charCodeAt(0) % Alphabet.length]).join('');
};
