/**
 * Never crash on input: seeded random requests (methods, path shapes, query values, content types,
 * bodies) against a real server. Every answer is a 2xx–4xx with a Status body for errors; no 5xx,
 * nothing logged as an unexpected failure, and the server still serves afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespace, pod, startTestServer, type TestServer } from '../support/helpers.js';

/** mulberry32: a tiny seeded PRNG, so a failure can be replayed. */
function rng(seed: number): () => number {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const segments = ['api', 'apis', 'v1', 'namespaces', 'fz', 'pods', 'services', 'status', 'finalize', 'watch', 'x', '%', '..', 'a%2Fb', '', 'apps', 'v1beta1', 'deployments'];
const shapes = [
  '/api/v1/namespaces/fz/pods', '/api/v1/namespaces/fz/pods/x', '/api/v1/namespaces/fz/pods/x/status', '/api/v1/pods', '/api/v1/namespaces',
  '/api/v1/namespaces/fz', '/api/v1/namespaces/fz/finalize', '/api/v1/watch/namespaces/fz/pods', '/api/v1/namespaces/fz/services',
  '/apis/apps/v1beta1/namespaces/fz/deployments', '/api', '/apis', '/api/v1', '/version', '/openapi/v2',
];
const queries = ['', 'watch=true', 'limit=-3', 'limit=2', 'continue=garbage', 'labelSelector=a%3D%3D%3Db', 'fieldSelector=nope%3D1', 'resourceVersion=abc', 'dryRun=All', 'pretty=true', 'gracePeriodSeconds=x', 'propagationPolicy=Orphan'];
const types = ['application/json', 'application/yaml', 'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/vnd.kubernetes.protobuf', 'text/plain', ''];
const accepts = ['application/json', 'application/yaml', 'application/json;as=Table;v=v1;g=meta.k8s.io', 'application/vnd.kubernetes.protobuf', '*/*', 'text/html'];

describe('random requests', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
    await s.request('POST', '/api/v1/namespaces', { body: namespace('fz') });
    await s.request('POST', '/api/v1/namespaces/fz/pods', { body: pod('x') });
  });
  afterAll(() => s.close());

  it('answers 300 seeded random requests without a 5xx', async () => {
    const r = rng(Number(process.env.FUZZ_SEED ?? 20261120)); // FUZZ_SEED=n replays another run
    const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
    const bodies = [
      () => JSON.stringify(pod('x')),
      () => JSON.stringify({ apiVersion: 'v1', kind: pick(['Pod', 'Namespace', 'Service', 'Nope']), metadata: { name: pick(['x', 'UPPER', '', 'a'.repeat(300)]) } }),
      () => '[{"op":"replace","path":"/metadata/labels","value":{"a":"b"}}]',
      () => Buffer.from(Array.from({ length: Math.floor(r() * 200) }, () => Math.floor(r() * 256))),
      () => '{"metadata":',
      () => 'k8s\u0000\u000a\u0002\u0001',
      () => 'a: [b, {c: d}]\n',
      () => undefined,
    ];
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      const path = r() < 0.7 ? pick(shapes) : `/${Array.from({ length: 1 + Math.floor(r() * 7) }, () => pick(segments)).join('/')}`;
      // Every request carries a timeout: a random path may be a watch, which otherwise streams for 30+ minutes.
      const query = [pick(queries), 'timeoutSeconds=1'].filter(Boolean).join('&');
      const body = pick(bodies)();
      const method = pick(methods);
      const headers: Record<string, string> = { accept: pick(accepts) };
      const type = pick(types);
      if (type) headers['content-type'] = type;
      const res = await s.request(method, `${path}${query ? `?${query}` : ''}`, { body: method === 'GET' || method === 'HEAD' ? undefined : body, headers });
      statuses.push(res.status);
      expect(res.status, `${method} ${path}?${query}`).toBeLessThan(500);
      if (res.status >= 400 && method !== 'HEAD' && res.json) expect(res.json).toMatchObject({ kind: 'Status', status: 'Failure', code: res.status });
    }
    expect(new Set(statuses).size).toBeGreaterThan(3);
    expect(s.logs.filter((l) => l.level === 'error')).toEqual([]);
    // Random DELETEs may legitimately remove things: what must hold is that the server still serves.
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('fz-after') })).status).toBe(201);
    expect((await s.request('GET', '/api/v1/namespaces/fz-after')).status).toBe(200);
  });
});
