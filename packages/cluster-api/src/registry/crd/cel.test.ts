import { describe, expect, it } from 'vitest';
import { celErrors, ruleErrors } from './cel.js';
import type { JSONSchemaProps, ValidationRule } from './schema.js';

const schema = (rule: string, extra: Partial<ValidationRule> = {}): JSONSchemaProps => ({
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: { xs: { type: 'array', maxItems: 10, items: { type: 'integer' } }, s: { type: 'string', maxLength: 10 }, d: { type: 'number' } },
      'x-kubernetes-validations': [{ rule, ...extra }],
    },
  },
});

describe('CEL rules', () => {
  it.each([
    ['self.xs.isSorted()', { xs: [1, 2, 2, 3] }, true],
    ['self.xs.isSorted()', { xs: [2, 1] }, false],
    ['self.xs.sum() == 6', { xs: [1, 2, 3] }, true],
    ['self.xs.min() == 1 && self.xs.max() == 3', { xs: [3, 1, 2] }, true],
    ['self.xs.indexOf(2) == 1 && self.xs.lastIndexOf(2) == 2', { xs: [1, 2, 2] }, true],
    ["self.s.matches('^[a-z]+$')", { s: 'abc' }, true],
    ["self.s.lowerAscii() == 'abc' && self.s.split('b').size() == 2", { s: 'ABC' }, false],
    ['self.d > 1.5', { d: 2 }, true],
    ['has(self.s) || self.xs.size() > 0', { xs: [1] }, true],
  ])('%s on %j is %s', (rule, spec, ok) => {
    expect(celErrors(schema(rule), { spec }, 'plain').length === 0).toBe(ok);
  });

  it('words failures as Kubernetes does, and a failed evaluation with its cause', () => {
    expect(celErrors(schema('self.xs.size() < 2', { message: 'too many' }), { spec: { xs: [1, 2] } }, 'plain')).toEqual([
      { type: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": too many' },
    ]);
    expect(celErrors(schema('self.xs.size() < 2', { messageExpression: "'got ' + string(self.xs.size())", reason: 'FieldValueForbidden', fieldPath: '.xs' }), { spec: { xs: [1, 2] } }, 'plain')).toEqual([
      { type: 'FieldValueForbidden', field: 'spec.xs', message: 'Forbidden: got 2' },
    ]);
    expect(celErrors(schema('self.s == "a"'), { spec: {} }, 'plain')[0]!.message).toBe('Invalid value: "object": failed rule: self.s == "a": field not found: s');
    expect(celErrors(schema('self.xs.min() > 0'), { spec: { xs: [] } }, 'plain')[0]!.message).toContain('min called on empty list');
  });

  it('runs transition rules on updates only, against the correlated old value', () => {
    const s = schema('self.s == oldSelf.s', { message: 'immutable' });
    expect(celErrors(s, { spec: { s: 'a' } }, 'plain')).toEqual([]);
    expect(celErrors(s, { spec: { s: 'b' } }, 'transition', { spec: { s: 'a' } })).toHaveLength(1);
    expect(celErrors(s, { spec: { s: 'a' } }, 'transition', { spec: { s: 'a' } })).toEqual([]);
    expect(celErrors(s, { spec: { s: 'b' } }, 'transition', {})).toEqual([]);
  });

  it('refuses at CRD creation what would fail or cost too much at every write', () => {
    const cost = () => ({ cardinality: 1, total: { cost: 0 } });
    expect(ruleErrors(schema('self.xs.all(x, self.xs.all(y, x <= y))').properties!.spec!, 'p', cost())).toEqual([]);
    const unbounded: JSONSchemaProps = { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.exists(y, x == y))' }] };
    expect(ruleErrors(unbounded, 'p', cost())[0]!.message).toMatch(/^Forbidden: estimated rule cost exceeds budget by factor of more than 100x/);
    const unknown: JSONSchemaProps = { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.quantity() > 1' }] };
    expect(ruleErrors(unknown, 'p', cost())[0]!.message).toContain("undeclared reference to 'quantity'");
  });
});
