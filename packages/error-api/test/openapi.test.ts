/** The served OpenAPI document describes what the service actually sends. */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hsEnv, sign } from './tokens.js';
import { startService, type Running } from './harness.js';

let svc: Running;
let doc: { openapi: string; paths: Record<string, unknown>; components: { schemas: Record<string, object> } };
let ajv: Ajv2020;

beforeAll(async () => {
  svc = await startService(hsEnv);
  const res = await fetch(`${svc.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as typeof doc;
  ajv = new Ajv2020({ strict: false, validateFormats: false });
  ajv.addSchema({ $id: 'openapi.json', components: doc.components });
});
afterAll(() => svc.close());

const validate = (schema: string, body: unknown): void => {
  const check = ajv.getSchema(`openapi.json#/components/schemas/${schema}`)!;
  expect(check(body), JSON.stringify(check.errors)).toBe(true);
};

describe('/openapi.json', () => {
  it('is OpenAPI 3.1 with both endpoints and both schemas, served without a token', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(['/api/v1/error', '/api/v1/error/{error_type}']);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['ApiErrorDescription', 'ApiError']));
    expect(doc.paths['/api/v1/error/{error_type}']).toMatchObject({ get: { operationId: 'getErrorDescription' } });
  });

  it('has an ETag and answers If-None-Match with 304', async () => {
    const etag = (await fetch(`${svc.url}/openapi.json`)).headers.get('etag')!;
    expect((await fetch(`${svc.url}/openapi.json`, { headers: { 'if-none-match': etag } })).status).toBe(304);
  });

  it('every served description and list validates against its schema', async () => {
    const headers = { authorization: `Bearer ${await sign()}` };
    const list = await (await fetch(`${svc.url}/api/v1/error`, { headers })).json();
    validate('ApiErrorDescriptionList', list);
    validate('ApiErrorDescription', await (await fetch(`${svc.url}/api/v1/error/Invalid`, { headers })).json());
  });

  it('every error body validates against ApiError', async () => {
    for (const res of [
      await fetch(`${svc.url}/api/v1/error/9`, { headers: { authorization: `Bearer ${await sign()}` } }),
      await fetch(`${svc.url}/api/v1/error/x`),
      await fetch(`${svc.url}/elsewhere`),
    ]) {
      validate('ApiError', await res.json());
    }
  });

  it('the schema refuses what Quay clients could not parse', () => {
    const check = ajv.getSchema('openapi.json#/components/schemas/ApiErrorDescription')!;
    expect(check({ type: 'x', title: 'not_found' })).toBe(false);
    expect(check({ type: 'x', title: 'unknown_title', description: 'd' })).toBe(false);
  });
});
