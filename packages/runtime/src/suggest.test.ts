import { describe, expect, it } from 'vitest';
import { closest, didYouMean, editDistance } from './suggest.js';

describe('editDistance', () => {
  it.each([
    ['deploy', 'deploy', 0],
    ['delpoy', 'deploy', 1],
    ['deply', 'deploy', 1],
    ['deployy', 'deploy', 1],
    ['invok', 'invoke', 1],
    ['', 'abc', 3],
    ['kitten', 'sitting', 3],
  ])('%s → %s is %i', (a, b, d) => expect(editDistance(a, b)).toBe(d));
});

describe('closest', () => {
  const verbs = ['deploy', 'delete', 'describe', 'dev', 'list', 'logs', 'secret', 'subscribe'];
  it('finds the verb a typo meant', () => {
    expect(closest('deplyo', verbs)).toBe('deploy');
    expect(closest('DESCRIBE', verbs)).toBe('describe');
    expect(closest('lsit', verbs)).toBe('list');
    expect(closest('secrets', verbs)).toBe('secret');
  });
  it('suggests nothing for a word far from every candidate, or for short words two edits away', () => {
    expect(closest('hello', verbs)).toBeUndefined();
    expect(closest('dx', verbs)).toBeUndefined();
    expect(closest('anything', [])).toBeUndefined();
    expect(didYouMean('hello', verbs)).toBe('');
    expect(didYouMean('lgos', verbs)).toBe(' Did you mean "logs"?');
  });
});
