import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { nestsDeeperThan, yamlDepthBound } from './depth.js';

describe('nestsDeeperThan', () => {
  it.each([
    [1, 0, false], ['s', 0, false], [{}, 1, false], [{}, 0, true], [[[]], 2, false], [[[]], 1, true],
    [{ a: { b: [1, { c: {} }] } }, 5, false], [{ a: { b: [1, { c: {} }] } }, 4, true], [Buffer.alloc(10), 0, false],
  ])('%j deeper than %d: %s', (value, limit, want) => {
    expect(nestsDeeperThan(value, limit)).toBe(want);
  });

  it('stops on cycles and on a million levels without recursing', () => {
    const loop: unknown[] = [];
    loop.push(loop);
    expect(nestsDeeperThan(loop, 256)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('['.repeat(1_000_000) + ']'.repeat(1_000_000)), 256)).toBe(true);
  });
});

describe('yamlDepthBound is never below the parsed depth', () => {
  const depthOf = (v: unknown): number => (typeof v !== 'object' || v === null ? 0 : 1 + Math.max(0, ...Object.values(v).map(depthOf)));
  it.each([
    'a: 1\n',
    'a:\n  b:\n    c: [1, {d: 2}]\n',
    '- - - x\n',
    'spec:\n  containers:\n  - name: c\n    image: i\n    ports:\n    - containerPort: 80\n',
    'a: |\n  text\n    more\nb: {c: [[1]]}\n',
    '? [a, b]\n: v\n',
    '# comment\n\nx:\n    y:\n        z: 1\n',
  ])('%j', (text) => {
    expect(yamlDepthBound(text)).toBeGreaterThanOrEqual(depthOf(parse(text)));
  });

  it('a manifest is bounded by its levels, not its indentation width', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `${'    '.repeat(i)}k${i}:`);
    expect(yamlDepthBound(`${lines.join('\n')} 1\n`)).toBe(2 * 40 + 1);
  });
});
