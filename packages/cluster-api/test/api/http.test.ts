/** Every path shape and every error over a real listening server, on each storage backend. */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Backends, namespace, pod, startTestServer, type TestServer } from '../support/helpers.js';

const failure = (code: number, reason: string) => ({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: expect.any(String) });

describe.each(Backends)('HTTP API on %s storage', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(backend);
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('ns1', { team: 'a' }) })).status).toBe(201);
  });
  afterAll(() => s.close());

  describe('discovery and non-resource paths', () => {
    it('serves /api, /api/v1 and /oapi/v1', async () => {
      const api = await s.request('GET', '/api');
      expect(api.json).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
      for (const path of ['/api/v1', '/api/v1/', '/oapi/v1']) {
        const list = await s.request('GET', path);
        expect(list.status).toBe(200);
        expect(list.json).toMatchObject({ kind: 'APIResourceList', groupVersion: 'v1' });
        const names = list.json.resources.map((r: { name: string }) => r.name);
        expect(names).toEqual(expect.arrayContaining(['pods', 'pods/status', 'namespaces', 'namespaces/finalize', 'services']));
        expect(list.json.resources.find((r: { name: string }) => r.name === 'pods')).toMatchObject({
          singularName: 'pod', namespaced: true, kind: 'Pod', shortNames: ['po'], verbs: expect.arrayContaining(['create', 'get', 'list', 'watch']),
        });
      }
    });

    it('serves /apis, and 404 for an unknown group or version', async () => {
      const apis = await s.request('GET', '/apis');
      expect(apis.json).toMatchObject({ kind: 'APIGroupList', apiVersion: 'v1', groups: expect.any(Array) });
      for (const g of apis.json.groups) {
        const group = await s.request('GET', `/apis/${g.name}`);
        expect(group.json).toMatchObject({ kind: 'APIGroup', name: g.name, preferredVersion: g.preferredVersion });
        const list = await s.request('GET', `/apis/${g.preferredVersion.groupVersion}`);
        expect(list.json.resources.length).toBeGreaterThan(0);
      }
      expect((await s.request('GET', '/apis/no.such.group')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('GET', '/apis/no.such.group/v1')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('GET', '/api/v2')).status).toBe(404);
    });

    it('serves YAML discovery when asked', async () => {
      const r = await s.request('GET', '/api/v1', { headers: { accept: 'application/yaml' } });
      expect(r.headers.get('content-type')).toBe('application/yaml');
      expect(r.text).toMatch(/^kind: APIResourceList/m);
    });

    it('serves /version, health probes and a minimal /openapi/v2', async () => {
      expect((await s.request('GET', '/version')).json).toMatchObject({ major: '1', minor: expect.any(String), gitVersion: expect.stringMatching(/^v1\./) });
      for (const p of ['/healthz', '/livez', '/readyz']) {
        const r = await s.request('GET', p, { token: null });
        expect([r.status, r.text]).toEqual([200, 'ok']);
      }
      expect((await s.request('GET', '/openapi/v2')).json).toMatchObject({ swagger: '2.0' });
      const pb = await s.request('GET', '/openapi/v2', { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
      expect(pb.headers.get('content-type')).toContain('protobuf');
      expect(pb.status).toBe(200);
    });

    it('answers 404 and 405 as Status bodies', async () => {
      expect((await s.request('GET', '/nope')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('POST', '/version')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('POST', '/api/v1', { body: {} })).json).toMatchObject(failure(405, 'MethodNotAllowed'));
      expect((await s.request('GET', '/api/v1/widgets')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('GET', '/api/v1/pods/p')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('GET', '/api/v1/namespaces/ns1/namespaces')).json).toMatchObject(failure(404, 'NotFound'));
      expect((await s.request('GET', '/api/v1/namespaces/ns1/pods/p/exec')).status).toBe(404);
      expect((await s.request('GET', '/api/v1/namespaces/ns1/services/x/finalize')).status).toBe(404);
      expect((await s.request('PUT', '/api/v1/namespaces/ns1/pods', { body: pod('x') })).json).toMatchObject(failure(405, 'MethodNotAllowed'));
      expect((await s.request('POST', '/api/v1/namespaces/ns1/pods/x', { body: pod('x') })).json).toMatchObject(failure(405, 'MethodNotAllowed'));
      expect((await s.request('OPTIONS', '/api/v1/namespaces/ns1/pods')).json).toMatchObject(failure(405, 'MethodNotAllowed'));
      expect((await s.request('DELETE', '/api/v1/namespaces/ns1/pods/x/status')).json).toMatchObject(failure(405, 'MethodNotAllowed'));
      expect((await s.request('GET', '/api/v1/namespaces/ns1/finalize')).json).toMatchObject(failure(405, 'MethodNotAllowed'));
    });
  });

  describe('authentication', () => {
    it.each([null, 'wrong-token', ''])('refuses token %j with a 401 Status on every non-health path', async (token) => {
      for (const path of ['/api', '/api/v1', '/apis', '/version', '/openapi/v2', '/api/v1/namespaces', '/nope']) {
        const r = await s.request('GET', path, { token });
        expect(r.status).toBe(401);
        expect(r.json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
      }
      const write = await s.request('POST', '/api/v1/namespaces', { token, body: namespace('sneaky') });
      expect(write.status).toBe(401);
      expect((await s.request('GET', '/api/v1/namespaces/sneaky')).status).toBe(404);
    });

    it('refuses a non-bearer scheme', async () => {
      const r = await s.request('GET', '/api', { token: null, headers: { authorization: 'Basic YWRtaW46YWRtaW4=' } });
      expect(r.status).toBe(401);
    });
  });

  describe('resource operations', () => {
    it('creates (201), reads, replaces, patches and deletes a namespaced object', async () => {
      const created = await s.request('POST', '/api/v1/namespaces/ns1/pods', { body: pod('web', { app: 'web' }) });
      expect(created.status).toBe(201);
      expect(created.json.metadata).toMatchObject({ name: 'web', namespace: 'ns1', uid: expect.any(String), resourceVersion: expect.any(String) });
      const got = await s.request('GET', '/api/v1/namespaces/ns1/pods/web');
      expect(got.json).toEqual(created.json);
      const replaced = await s.request('PUT', '/api/v1/namespaces/ns1/pods/web', {
        body: { ...got.json, metadata: { ...got.json.metadata, labels: { app: 'web', tier: 'front' } } },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.json.metadata.labels).toEqual({ app: 'web', tier: 'front' });
      const patched = await s.request('PATCH', '/api/v1/namespaces/ns1/pods/web', {
        body: { metadata: { annotations: { note: 'x' } } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect([patched.status, patched.json.metadata.annotations]).toEqual([200, { note: 'x', 'openshift.io/scc': 'anyuid' }]);
      const status = await s.request('GET', '/api/v1/namespaces/ns1/pods/web/status');
      expect(status.json.status.phase).toBe('Pending');
      const deleted = await s.request('DELETE', '/api/v1/namespaces/ns1/pods/web', { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
      expect(deleted.status).toBe(200);
      if (deleted.json.kind === 'Status') expect(deleted.json).toMatchObject({ status: 'Success', details: { name: 'web', kind: 'pods' } });
      else expect(deleted.json.metadata.deletionTimestamp).toBeDefined();
    });

    it('creates through the cross-namespace path with the namespace in the body', async () => {
      const r = await s.request('POST', '/api/v1/pods', { body: pod('cross', {}, 'ns1') });
      expect(r.status).toBe(201);
      expect((await s.request('GET', '/api/v1/namespaces/ns1/pods/cross')).status).toBe(200);
    });

    it('lists with label and field selectors, limit and continue, across namespaces', async () => {
      await s.request('POST', '/api/v1/namespaces', { body: namespace('ns2') });
      for (let i = 0; i < 5; i++) await s.request('POST', `/api/v1/namespaces/ns${1 + (i % 2)}/pods`, { body: pod(`p${i}`, { i: String(i), set: 'list' }) });
      const all = await s.request('GET', '/api/v1/pods?labelSelector=set%3Dlist');
      expect(all.json).toMatchObject({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: expect.any(String) } });
      expect(all.json.items).toHaveLength(5);
      const ns2 = await s.request('GET', '/api/v1/namespaces/ns2/pods?labelSelector=set%3Dlist');
      expect(ns2.json.items.map((p: any) => p.metadata.name).sort()).toEqual(['p1', 'p3']);
      const sel = await s.request('GET', '/api/v1/pods?labelSelector=' + encodeURIComponent('set=list,i in (1,2),i!=2'));
      expect(sel.json.items.map((p: any) => p.metadata.name)).toEqual(['p1']);
      const byName = await s.request('GET', '/api/v1/namespaces/ns1/pods?fieldSelector=metadata.name%3Dp2');
      expect(byName.json.items.map((p: any) => p.metadata.name)).toEqual(['p2']);
      const names: string[] = [];
      let cont = '';
      for (let page = 0; page < 10; page++) {
        const r = await s.request('GET', `/api/v1/pods?labelSelector=set%3Dlist&limit=2${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
        names.push(...r.json.items.map((p: any) => p.metadata.name));
        cont = r.json.metadata.continue ?? '';
        if (!cont) break;
      }
      expect(names.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
    });

    it('speaks YAML in and out, and pretty JSON', async () => {
      const yamlPod = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: yml\nspec:\n  containers:\n  - name: app\n    image: busybox\n';
      const created = await s.request('POST', '/api/v1/namespaces/ns1/pods', { body: yamlPod, headers: { 'content-type': 'application/yaml', accept: 'application/yaml' } });
      expect(created.status).toBe(201);
      expect(created.headers.get('content-type')).toBe('application/yaml');
      expect(created.text).toMatch(/^kind: Pod$/m);
      const pretty = await s.request('GET', '/api/v1/namespaces/ns1/pods/yml?pretty=true');
      expect(pretty.text).toMatch(/^{\n {2}"/);
    });

    it('answers compact JSON (spliced from stored bytes) with the same documents as pretty JSON', async () => {
      const body = pod('compact', { set: 'compact' });
      const created = await s.request('POST', '/api/v1/namespaces/ns1/pods', { body });
      expect(created.status).toBe(201);
      expect(created.text).toMatch(/^[^\n]*\n$/);
      expect(created.json).toEqual((await s.request('GET', '/api/v1/namespaces/ns1/pods/compact')).json);
      const labelled = await s.request('PATCH', '/api/v1/namespaces/ns1/pods/compact', {
        body: { metadata: { labels: { more: 'yes' } } }, headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(labelled.status).toBe(200);
      for (const path of ['/api/v1/namespaces/ns1/pods/compact', '/api/v1/namespaces/ns1/pods', '/api/v1/pods?labelSelector=set%3Dcompact', '/api/v1/namespaces/ns1/pods?limit=1']) {
        const compact = await s.request('GET', path);
        const pretty = await s.request('GET', `${path}${path.includes('?') ? '&' : '?'}pretty=true`);
        expect(compact.status).toBe(200);
        expect(compact.headers.get('content-type')).toBe('application/json');
        expect(compact.text).toMatch(/^[^\n]*\n$/);
        const { continue: _c, ...meta } = compact.json.metadata ?? {};
        const { continue: _p, ...prettyMeta } = pretty.json.metadata ?? {};
        expect({ ...compact.json, metadata: meta }).toEqual({ ...pretty.json, metadata: prettyMeta });
      }
      const one = await s.request('GET', '/api/v1/namespaces/ns1/pods/compact');
      expect(labelled.json).toEqual(one.json);
      expect(one.json.metadata).toMatchObject({ resourceVersion: labelled.json.metadata.resourceVersion, labels: { set: 'compact', more: 'yes' } });
    });

    it('answers kubectl-style Table requests', async () => {
      const accept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
      const list = await s.request('GET', '/api/v1/namespaces/ns1/pods?limit=500', { headers: { accept } });
      expect(list.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      const cols = list.json.columnDefinitions.map((c: any) => c.name);
      expect(cols[0]).toBe('Name');
      const age = cols.indexOf('Age');
      expect(age).toBeGreaterThan(0);
      for (const c of list.json.columnDefinitions.slice(age + 1)) expect(c.priority).toBeGreaterThan(0);
      expect(list.json.rows.length).toBeGreaterThan(0);
      expect(list.json.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { namespace: 'ns1' } });
      const one = await s.request('GET', '/api/v1/namespaces/ns1', { headers: { accept } });
      expect(one.json.rows).toEqual([{ cells: ['ns1', 'Active', expect.any(String)], object: expect.objectContaining({ kind: 'PartialObjectMetadata' }) }]);
    });

    it('deletes a collection by selector, and 405 where the kind does not allow it', async () => {
      for (const n of ['dc1', 'dc2', 'keep']) await s.request('POST', '/api/v1/namespaces/ns2/pods', { body: pod(n, { dc: n === 'keep' ? 'no' : 'yes' }) });
      const r = await s.request('DELETE', '/api/v1/namespaces/ns2/pods?labelSelector=dc%3Dyes', { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
      expect(r.status).toBe(200);
      expect(r.json.kind).toBe('PodList');
      const left = await s.request('GET', '/api/v1/namespaces/ns2/pods?labelSelector=dc');
      const names = left.json.items.filter((p: any) => !p.metadata.deletionTimestamp).map((p: any) => p.metadata.name);
      expect(names).toEqual(['keep']);
      expect((await s.request('DELETE', '/api/v1/namespaces/ns2/services')).json).toMatchObject(failure(405, 'MethodNotAllowed'));
    });

    it('replaces status through /status and finalizers through /finalize', async () => {
      await s.request('POST', '/api/v1/namespaces', { body: namespace('fin') });
      const ns = (await s.request('GET', '/api/v1/namespaces/fin')).json;
      const fin = await s.request('PUT', '/api/v1/namespaces/fin/finalize', { body: { ...ns, spec: { finalizers: [] } } });
      expect(fin.status).toBe(200);
      expect(fin.json.spec?.finalizers ?? []).toEqual([]);
      const p = (await s.request('POST', '/api/v1/namespaces/fin/pods', { body: pod('st') })).json;
      const st = await s.request('PUT', '/api/v1/namespaces/fin/pods/st/status', { body: { ...p, status: { phase: 'Running' } } });
      expect([st.status, st.json.status.phase]).toEqual([200, 'Running']);
      const main = await s.request('PUT', '/api/v1/namespaces/fin/pods/st', { body: { ...st.json, status: { phase: 'Failed' } } });
      expect(main.json.status.phase).toBe('Running');
    });

    it('dry-runs a create without storing it', async () => {
      const r = await s.request('POST', '/api/v1/namespaces/ns1/pods?dryRun=All', { body: pod('dry') });
      expect(r.status).toBe(201);
      expect((await s.request('GET', '/api/v1/namespaces/ns1/pods/dry')).status).toBe(404);
    });
  });

  describe('bad input', () => {
    it.each([
      ['malformed JSON', 'POST', '/api/v1/namespaces', '{"kind":', { 'content-type': 'application/json' }, 400, 'BadRequest'],
      ['an array body', 'POST', '/api/v1/namespaces', '[]', { 'content-type': 'application/json' }, 400, 'BadRequest'],
      ['an empty create body', 'POST', '/api/v1/namespaces', '', { 'content-type': 'application/json' }, 400, 'BadRequest'],
      ['malformed YAML', 'POST', '/api/v1/namespaces', 'a: [1', { 'content-type': 'application/yaml' }, 400, 'BadRequest'],
      ['a protobuf envelope without a kind', 'POST', '/api/v1/namespaces', 'k8s\u0000', { 'content-type': 'application/vnd.kubernetes.protobuf' }, 400, 'BadRequest'],
      ['a form body', 'POST', '/api/v1/namespaces', 'a=b', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'UnsupportedMediaType'],
      ['a JSON patch type', 'PATCH', '/api/v1/namespaces/ns1', '{}', { 'content-type': 'application/json' }, 415, 'UnsupportedMediaType'],
      ['a protobuf-only Accept on a kind without protobuf', 'GET', '/apis/extensions/v1beta1/namespaces/ns1/ingresses', undefined, { accept: 'application/vnd.kubernetes.protobuf' }, 406, 'NotAcceptable'],
      ['a bad limit', 'GET', '/api/v1/namespaces?limit=ten', undefined, {}, 400, 'BadRequest'],
      ['a bad dryRun', 'POST', '/api/v1/namespaces?dryRun=yes', '{}', {}, 400, 'BadRequest'],
      ['a bad propagationPolicy', 'DELETE', '/api/v1/namespaces/ns1?propagationPolicy=Now', undefined, {}, 400, 'BadRequest'],
      ['DeleteOptions of the wrong kind', 'DELETE', '/api/v1/namespaces/ns1', '{"kind":"Pod"}', {}, 400, 'BadRequest'],
      ['a bad includeObject', 'GET', '/api/v1/namespaces?includeObject=All', undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }, 400, 'BadRequest'],
    ])('refuses %s', async (_what, method, path, body, headers, code, reason) => {
      const r = await s.request(method, path, { body, headers });
      expect(r.status).toBe(code);
      if (reason) expect(r.json).toMatchObject(failure(code, reason));
    });

    it('refuses a body over 3 MiB with 413, declared or chunked, and stays up', async () => {
      const big = JSON.stringify({ ...namespace('big'), metadata: { name: 'big', annotations: { a: 'x'.repeat(3 * 1024 * 1024 + 10) } } });
      const r = await s.request('POST', '/api/v1/namespaces', { body: big });
      expect(r.json).toMatchObject(failure(413, 'RequestEntityTooLarge'));
      const chunks = new ReadableStream({
        start(c) {
          for (let i = 0; i < 4; i++) c.enqueue(new TextEncoder().encode('x'.repeat(1024 * 1024)));
          c.close();
        },
      });
      const streamed = await fetch(`${s.url}/api/v1/namespaces`, {
        method: 'POST', body: chunks, duplex: 'half', headers: { authorization: 'Bearer test-token-0123456789', 'content-type': 'application/json' },
      } as RequestInit).then((res) => res.status, () => 413);
      expect(streamed).toBe(413);
      expect((await s.request('GET', '/api/v1/namespaces/big')).status).toBe(404);
      expect((await s.request('GET', '/healthz')).status).toBe(200);
    });

    it('survives a client that sends half a body and hangs up', async () => {
      const { port } = new URL(s.url);
      await new Promise<void>((resolve) => {
        const sock = connect(Number(port), '127.0.0.1', () => {
          sock.write('POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer test-token-0123456789\r\n' +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"metadata":');
          setTimeout(() => (sock.destroy(), resolve()), 100);
        });
      });
      expect((await s.request('GET', '/healthz')).status).toBe(200);
      expect(s.logs.filter((l) => l.level === 'error')).toEqual([]);
    });

    it('maps store errors to Kubernetes Status reasons', async () => {
      expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('ns1') })).json).toMatchObject(failure(409, 'AlreadyExists'));
      expect((await s.request('GET', '/api/v1/namespaces/ns1/pods/missing')).json).toMatchObject({
        ...failure(404, 'NotFound'), message: 'pods "missing" not found', details: { name: 'missing', kind: 'pods' },
      });
      const invalid = await s.request('POST', '/api/v1/namespaces/ns1/pods', { body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'Bad_Name' }, spec: { containers: [] } } });
      expect(invalid.json).toMatchObject(failure(422, 'Invalid'));
      expect(invalid.json.details.causes.length).toBeGreaterThan(0);
      const cur = (await s.request('GET', '/api/v1/namespaces/ns1')).json;
      const stale = { ...cur, metadata: { ...cur.metadata, resourceVersion: '1', labels: { x: 'y' } } };
      if (cur.metadata.resourceVersion !== '1') expect((await s.request('PUT', '/api/v1/namespaces/ns1', { body: stale })).json).toMatchObject(failure(409, 'Conflict'));
    });

    it('never logs a token or leaks internals, and survives garbage', async () => {
      const paths = ['/%', '/api/v1/namespaces/%ZZ', '/api/v1/namespaces/' + 'a'.repeat(5000), '/apis/%2F/%2F', '/api/v1/watch/namespaces/x/pods/y/z', '//api//v1//'];
      for (const p of paths) expect((await s.request('GET', p)).status).toBeLessThan(500);
      expect(JSON.stringify(s.logs)).not.toContain('test-token');
      expect((await s.request('GET', '/healthz')).status).toBe(200);
    });
  });
});
