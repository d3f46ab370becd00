import { describe, expect, it } from 'vitest';
import { catalogData } from './catalog-data.js';
import { buildCatalog, Catalog, ERROR_TYPE_PATTERN } from './catalog.js';

/** Quay's ApiErrorType and ERROR_DESCRIPTION (endpoints/exception.py), verbatim. */
const QUAY: Record<string, string> = {
  external_service_timeout: 'An external service timed out. Retrying the request may resolve the issue.',
  invalid_request: 'The request was invalid. It may have contained invalid values or was improperly formatted.',
  invalid_response: 'The response was invalid.',
  invalid_token: 'The access token provided was invalid.',
  expired_token: 'The access token provided has expired.',
  insufficient_scope: 'The access token did not have sufficient scope to access the requested resource.',
  fresh_login_required: 'The action requires a fresh login to succeed.',
  exceeds_license: 'The action was refused because the current license does not allow it.',
  not_found: 'The resource was not found.',
  downstream_issue: 'An error occurred in a downstream service.',
};

const runtimeTable = {
  invalid_json: { status: 400, title: 'Malformed JSON body', description: 'The body is not JSON. Fix the body.' },
  invalid_response: { status: 500, title: 'Invalid function response', description: 'The function returned junk.' },
  timeout: { status: 504, title: 'Function timed out.', description: 'Raise the timeout.' },
};

describe('catalog data', () => {
  it('holds Quay\'s ten error types, each starting with Quay\'s own sentence', () => {
    const quay = catalogData.filter((e) => e.source === 'quay');
    expect(quay.map((e) => e.title).sort()).toEqual(Object.keys(QUAY).sort());
    for (const e of quay) expect(e.description.startsWith(QUAY[e.title]!)).toBe(true);
  });

  it.each(catalogData.map((e) => [e.title, e] as const))('%s is well formed and says how to fix it', (_, e) => {
    expect(e.title).toMatch(ERROR_TYPE_PATTERN);
    expect(e.status).toBeGreaterThanOrEqual(400);
    expect(e.status).toBeLessThan(600);
    // At least two sentences: what happened, then what to do.
    expect(e.description.split(/\.\s+/).length).toBeGreaterThanOrEqual(2);
  });
});

describe('buildCatalog', () => {
  const catalog = buildCatalog(runtimeTable);

  it('adds the runtime codes with the runtime title leading the description', () => {
    expect(catalog.get('invalid_json')).toEqual({
      title: 'invalid_json',
      status: 400,
      source: 'runtime',
      description: 'Malformed JSON body. The body is not JSON. Fix the body.',
    });
    expect(catalog.get('timeout')?.description).toBe('Function timed out. Raise the timeout.');
  });

  it('describes a code both Quay and the runtime emit once, covering both meanings', () => {
    const shared = catalog.get('invalid_response')!;
    expect(shared.source).toBe('quay');
    expect(shared.description.startsWith(QUAY.invalid_response!)).toBe(true);
    expect(shared.description).toContain('From the function runtime: Invalid function response. The function returned junk.');
    expect(catalog.entries().filter((e) => e.title === 'invalid_response')).toHaveLength(1);
  });

  it('does not change the static data when merging', () => {
    buildCatalog(runtimeTable);
    expect(catalogData.find((e) => e.title === 'invalid_response')!.description).not.toContain('runtime');
  });

  it('builds Quay\'s error_view: absolute type URL, title, description', () => {
    expect(catalog.describe(catalog.get('not_found')!, 'https://h.example')).toEqual({
      type: 'https://h.example/api/v1/error/not_found',
      title: 'not_found',
      description: catalog.get('not_found')!.description,
    });
  });

  it('is case-sensitive, as Quay is', () => {
    expect(catalog.has('NotFound')).toBe(true);
    expect(catalog.has('notfound')).toBe(false);
  });

  it('refuses a malformed runtime code instead of serving it', () => {
    expect(() => buildCatalog({ 'bad code': { status: 400, title: 'x', description: 'y' } })).toThrow(/does not match/);
  });

  it('refuses a title defined twice', () => {
    const row = { title: 'dup', status: 400, source: 'service' as const, description: 'a. b' };
    expect(() => new Catalog([row, row])).toThrow(/defined twice/);
  });
});
