import { describe, expect, it } from 'vitest';
import { nameProblem, suggestName } from '../src/name.js';

describe('nameProblem', () => {
  it.each(['a', 'my-function', 'fn-2', '0day', 'a'.repeat(63)])('accepts %j', (name) => {
    expect(nameProblem(name)).toBeUndefined();
  });

  it.each([
    ['', /empty/],
    ['a'.repeat(64), /64 characters long; at most 63/],
    ['My-Function', /not a valid function name/],
    ['-leading', /not a valid function name/],
    ['trailing-', /not a valid function name/],
    ['has_underscore', /not a valid function name/],
    ['dots.in.name', /not a valid function name/],
    ['../escape', /not a valid function name/],
    ['a/b', /not a valid function name/],
    ['..', /not a valid function name/],
    ['ünïcode', /not a valid function name/],
    ['with space', /not a valid function name/],
  ])('refuses %j', (name, message) => {
    expect(nameProblem(name)).toMatch(message);
  });
});

describe('suggestName', () => {
  it.each([
    ['my-fn', 'my-fn'],
    ['My_Function', 'my-function'],
    ['  Order Events!! ', 'order-events'],
    ['---', undefined],
    ['Ω', undefined],
    [`${'a'.repeat(62)}-b`, 'a'.repeat(62)],
  ])('%j → %j', (dir, name) => {
    expect(suggestName(dir)).toBe(name);
  });
});
