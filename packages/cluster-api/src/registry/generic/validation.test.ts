import { describe, expect, it } from 'vitest';
import {
  DNS1123LabelMessage, isDNS1035Label, isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue,
  validateAnnotations, validateLabels,
} from './validation.js';

describe('name rules', () => {
  it('words the DNS-1123 label message as Kubernetes does', () => {
    expect(DNS1123LabelMessage).toBe(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  });

  it.each([
    [isDNS1123Label, 'my-name', 0],
    [isDNS1123Label, 'My-Name', 1],
    [isDNS1123Label, 'a.b', 1],
    [isDNS1123Label, 'a'.repeat(64), 1],
    [isDNS1123Subdomain, 'example.com', 0],
    [isDNS1123Subdomain, '-bad.com', 1],
    [isDNS1123Subdomain, 'a'.repeat(254), 1],
    [isDNS1035Label, 'abc-1', 0],
    [isDNS1035Label, '1abc', 1],
    [isQualifiedName, 'example.com/My_Name', 0],
    [isQualifiedName, 'a/b/c', 1],
    [isQualifiedName, '/x', 1],
    [isQualifiedName, 'bad key', 1],
    [isValidLabelValue, '', 0],
    [isValidLabelValue, 'My.Value_1', 0],
    [isValidLabelValue, '-x', 1],
  ])('%o(%j) gives %i errors', (rule, value, count) => {
    expect(rule(value)).toHaveLength(count);
  });

  it('names the part that is wrong in qualified names', () => {
    expect(isQualifiedName('Bad_Prefix/x')[0]).toMatch(/^prefix part a lowercase RFC 1123 subdomain/);
    expect(isQualifiedName('x/')[0]).toBe('name part must be non-empty');
  });
});

describe('metadata maps', () => {
  it('reports bad label keys and values at metadata.labels', () => {
    const errs = validateLabels({ 'ok': 'fine', 'bad key': 'x', k: '-v-' }, 'metadata.labels');
    expect(errs.map((e) => [e.field, e.type])).toEqual([['metadata.labels', 'FieldValueInvalid'], ['metadata.labels', 'FieldValueInvalid']]);
    expect(errs[0]!.message).toMatch(/^Invalid value: "bad key": name part must consist of/);
  });

  it('limits annotations to 256 KiB in total', () => {
    expect(validateAnnotations({ a: 'x'.repeat(1000) }, 'metadata.annotations')).toEqual([]);
    const [err] = validateAnnotations({ a: 'x'.repeat(256 * 1024) }, 'metadata.annotations');
    expect(err).toEqual({ type: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: must have at most 262144 bytes' });
  });
});
