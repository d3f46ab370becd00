import { describe, expect, it } from 'vitest';
import type { Trigger } from '../types.js';
import { compileFilter } from './filters.js';

const EVENT = { specversion: '1.0', id: '1', source: 'https://example.com/orders', type: 'com.example.order.created', region: 'eu', count: 3 };

function spec(extra: Partial<Trigger['spec']>): Trigger['spec'] {
  return { broker: 'default', subscriber: { uri: 'http://127.0.0.1/' }, ...extra };
}

function passes(extra: Partial<Trigger['spec']>): boolean {
  const c = compileFilter(spec(extra));
  if (!('predicate' in c)) throw new Error(JSON.stringify(c.problems));
  return c.predicate(EVENT);
}

describe('filter.attributes', () => {
  it.each([
    [{}, true],
    [{ type: 'com.example.order.created' }, true],
    [{ type: 'com.example.order.created', region: 'eu' }, true],
    [{ type: 'com.example.order.created', region: 'us' }, false],
    [{ region: '' }, true],
    [{ missing: '' }, false],
    [{ count: '3' }, true],
    [{ type: 'com.example.order' }, false],
  ])('%j → %s', (attributes, expected) => {
    expect(passes({ filter: { attributes } })).toBe(expected);
  });
});

describe('filters dialects', () => {
  it.each([
    [[{ exact: { type: 'com.example.order.created' } }], true],
    [[{ exact: { region: 'us' } }], false],
    [[{ exact: { missing: 'x' } }], false],
    [[{ prefix: { type: 'com.example.' } }], true],
    [[{ suffix: { source: '/orders' } }], true],
    [[{ suffix: { source: '/users' } }], false],
    [[{ prefix: { type: 'com.' } }, { suffix: { type: '.deleted' } }], false],
    [[{ all: [{ prefix: { type: 'com.' } }, { exact: { region: 'eu' } }] }], true],
    [[{ any: [{ exact: { region: 'us' } }, { exact: { region: 'eu' } }] }], true],
    [[{ any: [{ exact: { region: 'us' } }, { exact: { region: 'ap' } }] }], false],
    [[{ not: { exact: { region: 'us' } } }], true],
    [[{ not: { exact: { region: 'eu' } } }], false],
    [[{ cesql: "type LIKE 'com.example.%' AND count > 2" }], true],
    [[{ cesql: 'count > 5' }], false],
    [[{ cesql: 'missing = 1' }], false],
    [[{ cesql: "'not boolean'" }], false],
    [[{}], true],
  ])('%j → %s', (filters, expected) => {
    expect(passes({ filters })).toBe(expected);
  });

  it('replaces filter.attributes when non-empty, and not when empty', () => {
    expect(passes({ filter: { attributes: { region: 'us' } }, filters: [{ exact: { region: 'eu' } }] })).toBe(true);
    expect(passes({ filter: { attributes: { region: 'us' } }, filters: [] })).toBe(false);
  });
});

describe('invalid filters are problems with field paths', () => {
  it.each([
    [{ filters: [{ exact: { type: 'a', source: 'b' } }] }, 'spec.filters[0].exact', 'Multiple items found'],
    [{ filters: [{ exact: { Type: 'a' } }] }, 'spec.filters[0].exact.Type', 'Attribute name must start with a letter'],
    [{ filters: [{ prefix: { type: '' } }] }, 'spec.filters[0].prefix.type', 'non-empty string'],
    [{ filters: [{ exact: { type: 'a' }, prefix: { type: 'b' } }] }, 'spec.filters[0]', 'multiple dialects'],
    [{ filters: [{ all: [] }] }, 'spec.filters[0].all', 'at least one nested filter'],
    [{ filters: [{ any: [{ suffix: { a: 'x', b: 'y' } }] }] }, 'spec.filters[0].any[0].suffix', 'Multiple items found'],
    [{ filters: [{ not: { cesql: 'type = ' } }] }, 'spec.filters[0].not.cesql', 'invalid CESQL expression: parse error at position 8'],
    [{ filters: [{ cesql: 'NOSUCH(type)' }] }, 'spec.filters[0].cesql', 'unknown function NOSUCH/1'],
    [{ filters: [{ cesql: 42 }] }, 'spec.filters[0].cesql', 'must be a string'],
    [{ filters: 'type' }, 'spec.filters', 'must be a list'],
    [{ filter: { attributes: { 'Bad-Name': 'x' } } }, 'spec.filter.attributes.Bad-Name', 'Attribute name'],
    [{ filter: { attributes: { type: 3 } } }, 'spec.filter.attributes.type', 'Only string values'],
  ] as [Partial<Trigger['spec']>, string, string][])('%j', (extra, path, message) => {
    const c = compileFilter(spec(extra));
    expect('problems' in c && c.problems).toEqual([{ path, message: expect.stringContaining(message) }]);
  });
});
