import { describe, expect, it } from 'vitest';
import { hasBody } from './body.js';

describe('hasBody', () => {
  it.each([
    ['', false],
    ['   \r\n\t', false],
    ['\u00a0\ufeff ', false],
    ['{}', true],
    ['  \n{"kind":"DeleteOptions"}', true],
    ['\u00a0{}', true],
    ['é', true],
  ])('%j → %s', (text, want) => {
    expect(hasBody(Buffer.from(text))).toBe(want);
  });
});
