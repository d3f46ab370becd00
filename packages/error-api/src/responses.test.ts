import { describe, expect, it } from 'vitest';
import { cacheable, etagOf, matchesIfNoneMatch, problem } from './responses.js';

describe('problem', () => {
  it('is Quay\'s ApiException.to_dict as application/problem+json', () => {
    const r = problem('https://h', 404, 'not_found', 'Not Found', { x: 'y' });
    expect(r.statusCode).toBe(404);
    expect(r.headers).toEqual({ 'content-type': 'application/problem+json', 'cache-control': 'no-store', x: 'y' });
    expect(JSON.parse(r.body!)).toEqual({
      status: 404,
      type: 'https://h/api/v1/error/not_found',
      title: 'not_found',
      detail: 'Not Found',
      error_message: 'Not Found',
      error_type: 'not_found',
    });
  });

  it('keeps type a relative reference when no base URL is known', () => {
    expect(JSON.parse(problem('', 400, 'invalid_request', 'x').body!).type).toBe('/api/v1/error/invalid_request');
  });
});

describe('ETag and If-None-Match', () => {
  const tag = etagOf('{"a":1}');

  it('is a stable quoted tag that changes with the body', () => {
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf('{"a":1}')).toBe(tag);
    expect(etagOf('{"a":2}')).not.toBe(tag);
  });

  it.each([
    [undefined, false],
    ['', false],
    ['*', true],
    [tag, true],
    [`W/${tag}`, true],
    [`"other", ${tag}`, true],
    ['"other"', false],
    [tag.slice(1, -1), false],
  ])('If-None-Match %j → %s', (header, match) => {
    expect(matchesIfNoneMatch(header, tag)).toBe(match);
  });
});

describe('cacheable', () => {
  const cache = { 'cache-control': 'private, max-age=60' };

  it('is a 200 with the ETag of exactly the bytes sent', () => {
    const r = cacheable({ a: 1 }, undefined, cache);
    expect(r).toEqual({
      statusCode: 200,
      headers: { 'content-type': 'application/json', etag: etagOf('{"a":1}'), 'cache-control': 'private, max-age=60' },
      body: '{"a":1}',
    });
  });

  it('is a 304 with ETag and Cache-Control and no body when the tag matches', () => {
    expect(cacheable({ a: 1 }, etagOf('{"a":1}'), cache)).toEqual({
      statusCode: 304,
      headers: { etag: etagOf('{"a":1}'), 'cache-control': 'private, max-age=60' },
    });
  });
});
