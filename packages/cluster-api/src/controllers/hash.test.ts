import { describe, expect, it } from 'vitest';
import { semanticEqual } from './hash.js';

describe('semanticEqual (apiequality.Semantic.DeepEqual)', () => {
  it('tells absent, null and empty lists and maps apart from nothing, at the top as below it', () => {
    // An Endpoints with no address is written without `subsets`: the next sync compares absent with [].
    expect(semanticEqual(undefined, [])).toBe(true);
    expect(semanticEqual(null, {})).toBe(true);
    expect(semanticEqual({ a: [] }, {})).toBe(true);
    expect(semanticEqual([{ addresses: [] }], [{}])).toBe(true);
  });

  it('tells values apart', () => {
    expect(semanticEqual(undefined, [{ addresses: [{ ip: '10.0.0.1' }] }])).toBe(false);
    expect(semanticEqual([], [0])).toBe(false);
    expect(semanticEqual({ a: 1 }, { a: '1' })).toBe(false);
    expect(semanticEqual('x', undefined)).toBe(false);
  });
});
