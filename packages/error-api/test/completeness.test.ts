/**
 * The catalog describes every error type the project emits: a new runtime code or cluster API
 * Status reason without a row here fails this test.
 */
import { StatusReasons } from '@func/cluster-api';
import { runtimeErrors } from '@func/runtime';
import { describe, expect, it } from 'vitest';
import { createErrorApi } from '../src/index.js';
import { ServiceErrorTypes } from '../src/responses.js';
import { hsEnv } from './tokens.js';

const QUAY_TYPES = [
  'external_service_timeout', 'invalid_request', 'invalid_response', 'invalid_token', 'expired_token',
  'insufficient_scope', 'fresh_login_required', 'exceeds_license', 'not_found', 'downstream_issue',
];

describe('catalog completeness', async () => {
  const api = createErrorApi({ env: hsEnv, runtimeErrors, announce: () => {} });
  await api.init();
  const catalog = api.catalog();

  it.each(Object.keys(runtimeErrors))('runtime code %s is described', (code) => {
    expect(catalog.get(code)?.description).toContain(runtimeErrors[code as keyof typeof runtimeErrors].description);
  });

  it.each([...StatusReasons])('cluster API Status reason %s is described', (reason) => {
    expect(catalog.get(reason)).toMatchObject({ source: 'cluster-api' });
  });

  it.each(QUAY_TYPES)('Quay error type %s is described', (type) => {
    expect(catalog.has(type)).toBe(true);
  });

  it.each([...ServiceErrorTypes])('the service\'s own error type %s is described', (type) => {
    expect(catalog.has(type)).toBe(true);
  });

  it('describes nothing that no one emits', () => {
    const emitted = new Set([...Object.keys(runtimeErrors), ...StatusReasons, ...QUAY_TYPES, ...ServiceErrorTypes]);
    expect(catalog.entries().filter((e) => !emitted.has(e.title))).toEqual([]);
  });
});
