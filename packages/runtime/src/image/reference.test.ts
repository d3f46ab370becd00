import { describe, expect, it } from 'vitest';
import { checkReference, imageReference, isLocalOnly, pinnedReference } from './reference.js';

describe('image names (Knative func\'s precedence)', () => {
  it.each([
    [{ image: 'q.io/a/x:v1' }, { image: 'y:v2', registry: 'r.io/b' }, 'q.io/a/x:v1'],
    [{ registry: '127.0.0.1:5000/fn' }, { image: 'y:v2' }, '127.0.0.1:5000/fn/hello:latest'],
    [{ registry: '127.0.0.1:5000/fn/' }, {}, '127.0.0.1:5000/fn/hello:latest'],
    [{}, { image: 'ghcr.io/me/hello:v3', registry: 'r.io/b' }, 'ghcr.io/me/hello:v3'],
    [{}, { registry: 'quay.io/alice' }, 'quay.io/alice/hello:latest'],
    [{}, {}, 'localhost/hello:latest'],
  ])('flags %j, func.yaml %j → %s', async (flags, yaml, ref) => {
    expect(await imageReference('hello', flags, yaml)).toBe(ref);
  });

  it.each([
    ['UPPER/case:v1', /lowercase/],
    ['hello:bad tag', /tag/],
    [`hello@sha256:${'a'.repeat(64)}`, /give a tag, not a digest/],
  ])('refuses %s', async (ref, message) => {
    await expect(checkReference(ref)).rejects.toThrow(message);
  });

  it('pins to the digest; localhost/ is the local store', () => {
    expect(pinnedReference('127.0.0.1:5000/fn/hello:v1', 'sha256:ab')).toBe('127.0.0.1:5000/fn/hello@sha256:ab');
    expect(pinnedReference('localhost/hello', 'sha256:ab')).toBe('localhost/hello@sha256:ab');
    expect(isLocalOnly('localhost/hello:latest')).toBe(true);
    expect(isLocalOnly('localhost:5000/hello:latest')).toBe(false);
  });
});
