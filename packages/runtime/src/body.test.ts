import { describe, expect, it } from 'vitest';
import { mediaType, parseBody } from './body.js';
import { RuntimeError } from './errors.js';

describe('parseBody', () => {
  it.each([
    ['application/json', '{"a":1}', { a: 1 }],
    ['application/json; charset=utf-8', '[1,2]', [1, 2]],
    ['application/vnd.api+json', '{"b":true}', { b: true }],
    ['application/x-www-form-urlencoded', 'a=1&b=2&b=3', { a: '1', b: ['2', '3'] }],
    ['text/plain', 'hello', 'hello'],
    ['text/csv; charset=utf-8', 'a,b', 'a,b'],
    ['application/json', '', undefined],
  ])('%s %j', (type, text, expected) => {
    expect(parseBody(Buffer.from(text), type)).toEqual(expected);
  });

  it('keeps unknown types as bytes', () => {
    const raw = Buffer.from([1, 2, 3]);
    expect(parseBody(raw, 'application/octet-stream')).toBe(raw);
    expect(parseBody(raw, undefined)).toBe(raw);
  });

  it('rejects malformed JSON with invalid_json and a 400', () => {
    let err: unknown;
    try {
      parseBody(Buffer.from('{"a":'), 'application/json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RuntimeError);
    expect(err).toMatchObject({ code: 'invalid_json', status: 400 });
  });

  it.each([
    [undefined, ''],
    ['Application/JSON; charset=UTF-8', 'application/json'],
    ['text/plain', 'text/plain'],
  ])('mediaType(%j) = %j', (input, expected) => {
    expect(mediaType(input)).toBe(expected);
  });
});
