import { describe, expect, it } from 'vitest';
import { block } from './node-ipam.js';

describe('block', () => {
  it.each([
    ['127.64.0.0/10', 20, 0, '127.64.0.0/20'],
    ['127.64.0.0/10', 20, 1, '127.64.16.0/20'],
    ['127.64.0.0/10', 20, 1023, '127.127.240.0/20'],
    ['127.64.0.0/10', 20, 1024, undefined],
    ['10.244.0.0/16', 24, 3, '10.244.3.0/24'],
  ])('%s in /%i, block %i → %s', (cidr, mask, i, want) => expect(block(cidr, mask, i)).toBe(want));
});
