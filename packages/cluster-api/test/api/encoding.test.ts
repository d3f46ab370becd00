/**
 * What kube-apiserver writes, byte for byte: Status field order (Go's struct order: kind, apiVersion,
 * metadata, status, message, reason, details, code), the newline json.Encoder ends every compact body
 * with, `pretty` as json.MarshalIndent (two spaces, no newline; chosen by the query's strconv.ParseBool
 * value, else by a curl / Wget / browser User-Agent, or `pretty=1` in Accept), Go's HTML escapes, and
 * boolean query parameters decoded as runtime.Convert_Slice_string_To_bool does ("false" and "0" in
 * any case are false, every other value true). Reference bodies are ones captured from real clusters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWatch, pod, startTestServer, type TestServer } from '../support/helpers.js';

let s: TestServer;
const NS = '/api/v1/namespaces/enc/pods';

beforeAll(async () => {
  s = await startTestServer('memory');
  expect((await s.request('POST', '/api/v1/namespaces', { body: { metadata: { name: 'enc' } } })).status).toBe(201);
  expect((await s.request('POST', NS, { body: pod('web') })).status).toBe(201);
});
afterAll(() => s.close());

describe('Status bodies are kube-apiserver bytes', () => {
  it.each([
    [
      'an unknown resource of a served group version (go-restful 404: details {})',
      '/api/v1/foos',
      404,
      // Captured from a real cluster (Python client, Content-Length 174).
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}\n',
    ],
    [
      'an unknown resource of a served group',
      '/apis/batch/v9/jobs',
      404,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}\n',
    ],
    [
      'a group nobody serves (the not-found handler: no details)',
      '/apis/nope.example.com/v1/widgets',
      404,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","code":404}\n',
    ],
    [
      'a missing object',
      `${NS}/nope`,
      404,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"pods"},"code":404}\n',
    ],
    [
      'a name with characters Go escapes in JSON',
      `${NS}/a%3Cb%26c`,
      404,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"a\\u003cb\\u0026c\\" not found","reason":"NotFound","details":{"name":"a\\u003cb\\u0026c","kind":"pods"},"code":404}\n',
    ],
  ])('%s', async (_, path, code, body) => {
    const r = await s.request('GET', path);
    expect(r.status).toBe(code);
    expect(r.text).toBe(body);
    expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
  });

  it('AlreadyExists and Invalid: details in Go order (name, group, kind, causes), causes as reason, message, field', async () => {
    const exists = await s.request('POST', NS, { body: pod('web') });
    expect(exists.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"web\\" already exists","reason":"AlreadyExists","details":{"name":"web","kind":"pods"},"code":409}\n',
    );
    const bad = await s.request('POST', NS, { body: { ...pod('bad'), spec: { containers: [] } } });
    expect(bad.status).toBe(422);
    expect(bad.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Pod \\"bad\\" is invalid: spec.containers: Required value","reason":"Invalid","details":{"name":"bad","kind":"Pod","causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers"}]},"code":422}\n',
    );
  });

  it('Conflict, MethodNotAllowed (the kind\'s and go-restful\'s), UnsupportedMediaType: each in its details shape', async () => {
    const web = (await s.request('GET', `${NS}/web`)).json;
    const stale = await s.request('PUT', `${NS}/web`, { body: { ...web, metadata: { ...web.metadata, resourceVersion: '1' } } });
    expect(stale.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on pods \\"web\\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"web","kind":"pods"},"code":409}\n',
    );
    const verb = await s.request('POST', '/api/v1/componentstatuses', { body: { metadata: { name: 'x' } } });
    expect(verb.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"create is not supported on resources of kind \\"componentstatuses\\"","reason":"MethodNotAllowed","details":{"kind":"componentstatuses"},"code":405}\n',
    );
    const route = await s.request('PUT', NS, { body: pod('x') });
    expect(route.text).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server does not allow this method on the requested resource","reason":"MethodNotAllowed","details":{},"code":405}\n',
    );
    const media = await s.request('PATCH', `${NS}/web`, { body: '{}', headers: { 'content-type': 'text/plain' } });
    expect([media.status, Object.keys(media.json)]).toEqual([415, ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'code']]);
  });

  it('a DELETE gone at once answers a Success Status without code, as the generic store writes it', async () => {
    expect((await s.request('POST', NS, { body: pod('gone') })).status).toBe(201);
    const r = await s.request('DELETE', `${NS}/gone`);
    expect(r.status).toBe(200);
    expect(r.text).toBe(
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","kind":"pods","uid":"${r.json.details.uid}"}}\n`,
    );
  });

  it('a 504 for a future resourceVersion: "Timeout: " message, retryAfterSeconds and Retry-After', async () => {
    const r = await s.request('GET', `${NS}?resourceVersion=999999`);
    expect(r.status).toBe(504);
    expect(r.headers.get('retry-after')).toBe('1');
    expect(r.json).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure',
      message: expect.stringMatching(/^Timeout: Too large resource version: 999999, current: \d+$/),
      reason: 'Timeout',
      details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
      code: 504,
    });
    expect(Object.keys(r.json)).toEqual(['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']);
  });

  it('no Retry-After where a Status has no retryAfterSeconds', async () => {
    expect((await s.request('GET', `${NS}/nope`)).headers.get('retry-after')).toBeNull();
  });
});

describe('every JSON body ends with a newline, as json.Encoder writes it', () => {
  it.each([
    ['GET an object (stored bytes)', 'GET', `${NS}/web`],
    ['GET a list (stored bytes)', 'GET', NS],
    ['GET a filtered list', 'GET', `${NS}?labelSelector=x%3Dy`],
    ['discovery', 'GET', '/api/v1'],
    ['a Table', 'GET', NS, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }],
  ])('%s', async (_, method, path, headers?: Record<string, string>) => {
    const r = await s.request(method, path, { headers });
    expect(r.status).toBe(200);
    expect(r.text.endsWith('}\n')).toBe(true);
    expect(r.text.slice(0, -1)).not.toContain('\n');
    expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(r.text)));
  });

  it('a create and a patch answer', async () => {
    const made = await s.request('POST', NS, { body: pod('nl') });
    expect([made.status, made.text.endsWith('}\n')]).toEqual([201, true]);
    const patched = await s.request('PATCH', `${NS}/nl`, { body: { metadata: { labels: { a: 'b' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect([patched.status, patched.text.endsWith('}\n')]).toEqual([200, true]);
  });
});

describe('pretty', () => {
  // Objects keep their stored key order (apiVersion first); lists and Status are in Go's order.
  const indented = (r: { text: string }) => /^\{\n {2}"(kind|apiVersion)": "/.test(r.text) && r.text.endsWith('\n}');

  it.each(['true', 'True', 'TRUE', 't', 'T', '1'])('pretty=%s is json.MarshalIndent: two spaces, no trailing newline', async (v) => {
    const r = await s.request('GET', `${NS}/nope?pretty=${v}`);
    expect(r.text).toBe(
      '{\n  "kind": "Status",\n  "apiVersion": "v1",\n  "metadata": {},\n  "status": "Failure",\n  "message": "pods \\"nope\\" not found",\n  "reason": "NotFound",\n  "details": {\n    "name": "nope",\n    "kind": "pods"\n  },\n  "code": 404\n}',
    );
  });

  it.each(['false', 'False', 'FALSE', 'f', 'F', '0', 'yes', 'maybe'])('pretty=%s is compact (strconv.ParseBool false or invalid: ignored, never a 400)', async (v) => {
    const r = await s.request('GET', `${NS}/web?pretty=${v}`);
    expect([r.status, r.text.startsWith('{"'), r.text.endsWith('}\n')]).toEqual([200, true, true]);
  });

  it.each([
    ['a curl User-Agent', { 'user-agent': 'curl/8.5.0' }],
    ['a Wget User-Agent', { 'user-agent': 'Wget/1.21' }],
    ['a browser', { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' }],
    ['pretty=1 in Accept', { accept: 'application/json;pretty=1' }],
  ])('%s gets indented JSON', async (_, headers) => {
    expect(indented(await s.request('GET', `${NS}/web`, { headers }))).toBe(true);
    expect(indented(await s.request('GET', NS, { headers }))).toBe(true);
  });

  it('pretty=false wins over a curl User-Agent', async () => {
    const r = await s.request('GET', `${NS}/web?pretty=false`, { headers: { 'user-agent': 'curl/8.5.0' } });
    expect(r.text.startsWith('{"')).toBe(true);
  });

  it('a watch stays one compact event per line with pretty=true (the stream serializer is never pretty)', async () => {
    const w = await openWatch(s, `${NS}?watch=1&pretty=true&timeoutSeconds=5`);
    const first = await w.next();
    expect(first).toMatchObject({ type: 'ADDED', object: { kind: 'Pod' } });
    w.close();
  });
});

describe('boolean query parameters as kube-apiserver decodes them', () => {
  it.each(['true', 'True', 'TRUE', 't', 'T', '1', 'yes', ''])('watch=%s watches', async (v) => {
    const w = await openWatch(s, `${NS}?watch=${v}&timeoutSeconds=5`);
    expect(w.res.headers.get('content-type')).toBe('application/json;stream=watch');
    expect(await w.next()).toMatchObject({ type: 'ADDED' });
    w.close();
  });

  it.each(['false', 'False', 'FALSE', '0'])('watch=%s lists', async (v) => {
    const r = await s.request('GET', `${NS}?watch=${v}`);
    expect([r.status, r.json.kind]).toEqual([200, 'PodList']);
  });

  it('a named GET with watch=true is a get (only collections and /watch/ paths watch)', async () => {
    const r = await s.request('GET', `${NS}/web?watch=true`);
    expect([r.status, r.json.kind]).toEqual([200, 'Pod']);
  });

  it.each(['True', 'False', 'TRUE', 'f', '0'])('allowWatchBookmarks=%s is accepted', async (v) => {
    const w = await openWatch(s, `${NS}?watch=true&allowWatchBookmarks=${v}&timeoutSeconds=5`);
    expect(w.res.status).toBe(200);
    w.close();
  });

  it.each(['True', 'False', 'TRUE', 'FALSE'])('exact, export and includeUninitialized = %s are ignored, as kube-apiserver ignores them', async (v) => {
    const r = await s.request('GET', `${NS}/web?exact=${v}&export=${v}&includeUninitialized=${v}`);
    expect([r.status, r.json.kind]).toEqual([200, 'Pod']);
  });

  it('orphanDependents=False deletes like false; force=True applies like true', async () => {
    const rc = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc' }, spec: { replicas: 0, selector: { a: 'b' }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } };
    const rcs = '/api/v1/namespaces/enc/replicationcontrollers';
    expect((await s.request('POST', rcs, { body: rc })).status).toBe(201);
    expect((await s.request('POST', rcs, { body: { ...rc, metadata: { name: 'kept' } } })).status).toBe(201);
    // v1 ReplicationControllers orphan by default: "False" lifts that (gone at once), "TRUE" keeps it.
    expect((await s.request('DELETE', `${rcs}/rc?orphanDependents=False`)).json).toMatchObject({ kind: 'Status', status: 'Success' });
    expect((await s.request('DELETE', `${rcs}/kept?orphanDependents=TRUE`)).json.metadata.finalizers).toEqual(['orphan']);
    const apply = (force: string) =>
      s.request('PATCH', `${NS}/applied?fieldManager=m${force}`, {
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'applied', labels: { a: force } }, spec: { containers: [{ name: 'c', image: 'i' }] } }),
        headers: { 'content-type': 'application/apply-patch+yaml' },
      });
    expect((await apply('1')).status).toBe(201);
    expect((await s.request('PATCH', `${NS}/applied?fieldManager=other&force=True`, {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'applied', labels: { a: 'taken' } } }),
      headers: { 'content-type': 'application/apply-patch+yaml' },
    })).status).toBe(200);
    expect((await s.request('PATCH', `${NS}/applied?force=False`, { body: { metadata: { labels: { b: 'c' } } }, headers: { 'content-type': 'application/merge-patch+json' } })).status).toBe(422);
  });
});

describe('a watch below the retained history', () => {
  it('is HTTP 200 and one ERROR event, 410 Expired "too old resource version", as the watch cache answers', async () => {
    const rv = Number((await s.request('GET', NS)).json.metadata.resourceVersion);
    await s.storage.compact(rv);
    for (const accept of ['application/json', 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1']) {
      const res = await fetch(`${s.url}${NS}?watch=true&resourceVersion=1`, { headers: { authorization: 'Bearer test-token-0123456789', accept } });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, 'application/json;stream=watch']);
      expect(await res.text()).toBe(
        `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (${rv})","reason":"Expired","code":410}}\n`,
      );
    }
  });
});
