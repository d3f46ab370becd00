import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.js';
import { pod } from '../kinds/pod.js';
import { exactName, parseFieldSelector, parseLabelSelector } from './selectors.js';

const labels = { app: 'web', tier: 'front', n: '5' };

describe('label selectors', () => {
  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app=db', false],
    ['app in (web, db)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['app', true],
    ['!app', false],
    ['!missing', true],
    ['app=web,tier=front', true],
    ['app=web, tier=back', false],
    ['n>4', true],
    ['n<4', false],
    ['missing!=x', true],
  ])('%j matches: %s', (selector, expected) => {
    expect(parseLabelSelector(selector)(labels)).toBe(expected);
  });

  it.each([
    ['app in web', "unable to parse requirement: found 'web', expected: '('"],
    ['app=web,', "found '', expected: !, identifier, or 'end of string'"],
    ['=web', "found '=', expected: !, identifier, or 'end of string'"],
    ['app in (a b)', "unable to parse requirement: found 'b', expected: ',' or ')'"],
    ['app foo', "unable to parse requirement: found 'foo', expected: in, notin, =, ==, !=, gt, lt"],
    ['n>x', "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer"],
  ])('%j is a 400: %s', (selector, message) => {
    let err: unknown;
    try {
      parseLabelSelector(selector);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect([(err as ApiError).code, (err as ApiError).message]).toEqual([400, message]);
  });

  it('rejects invalid keys and values', () => {
    expect(() => parseLabelSelector('bad key!=x')).toThrow(ApiError);
    expect(() => parseLabelSelector('a=b c')).toThrow(ApiError);
    expect(() => parseLabelSelector('a=-bad-')).toThrow(/invalid label value/);
  });
});

describe('field selectors', () => {
  const fields = { 'metadata.name': 'a,b', 'metadata.namespace': 'ns', 'status.phase': 'Running' };
  it.each([
    ['status.phase=Running', true],
    ['status.phase==Running', true],
    ['status.phase!=Running', false],
    ['metadata.name=a\\,b', true],
    ['metadata.namespace=ns,status.phase=Pending', false],
  ])('%j matches: %s', (selector, expected) => {
    expect(parseFieldSelector(pod, selector)(fields)).toBe(expected);
  });

  it('answers 400 for unknown fields and malformed terms', () => {
    expect(() => parseFieldSelector(pod, 'spec.bogus=x')).toThrow('field label not supported: spec.bogus');
    expect(() => parseFieldSelector(pod, 'nonsense')).toThrow("invalid selector: 'nonsense'; can't understand 'nonsense'");
  });

  it('finds a single requested name', () => {
    expect(exactName('metadata.name=x')).toBe('x');
    expect(exactName('metadata.name=x,status.phase=Running')).toBeUndefined();
  });
});
