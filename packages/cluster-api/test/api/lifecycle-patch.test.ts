/**
 * PATCH over real HTTP for each kind family: JSON patch (with `test`), merge patch, and strategic
 * merge with Kubernetes' merge keys and the directives kubectl sends ($patch, $retainKeys,
 * $deleteFromPrimitiveList, $setElementOrder); /status; the resourceVersion precondition; 415 and
 * malformed bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespace, startTestServer, type TestServer } from '../support/helpers.js';

let s: TestServer;
const base = '/api/v1/namespaces/pt';
const JSONP = 'application/json-patch+json';
const MERGE = 'application/merge-patch+json';
const SMP = 'application/strategic-merge-patch+json';
const patch = (path: string, type: string, body: unknown) => s.request('PATCH', path, { body, headers: { 'content-type': type } });

beforeAll(async () => {
  s = await startTestServer('memory');
  await s.request('POST', '/api/v1/namespaces', { body: namespace('pt') });
  await s.request('POST', `${base}/pods`, {
    body: {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', labels: { app: 'web' }, finalizers: ['a.io/x', 'b.io/y'] },
      spec: {
        terminationGracePeriodSeconds: 0,
        containers: [
          { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80 }, { containerPort: 443 }] },
          { name: 'side', image: 'side:1' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
      },
    },
  });
  await s.request('POST', `${base}/replicationcontrollers`, {
    body: {
      apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rc' },
      spec: { replicas: 1, selector: { app: 'rc' }, template: { metadata: { labels: { app: 'rc' } }, spec: {
        containers: [
          { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }], ports: [{ containerPort: 80 }, { containerPort: 443 }] },
          { name: 'side', image: 'side:1' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
      } } },
    },
  });
  await s.request('POST', `${base}/services`, {
    body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] } },
  });
});
afterAll(() => s.close());

describe('JSON patch (RFC 6902)', () => {
  it('applies add/replace/remove/copy/move guarded by test, and fails the whole patch on a failed test', async () => {
    const ok = await patch(`${base}/pods/web`, JSONP, [
      { op: 'test', path: '/metadata/labels/app', value: 'web' },
      { op: 'add', path: '/metadata/labels/tier', value: 'front' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'app:2' },
      { op: 'copy', from: '/metadata/labels/tier', path: '/metadata/annotations' },
    ]);
    expect(ok.status).toBe(400); // annotations must be a map: the copy made it a string
    const good = await patch(`${base}/pods/web`, JSONP, [
      { op: 'test', path: '/metadata/labels/app', value: 'web' },
      { op: 'add', path: '/metadata/labels/tier', value: 'front' },
      { op: 'replace', path: '/spec/containers/0/image', value: 'app:2' },
      { op: 'add', path: '/metadata/annotations', value: {} },
      { op: 'copy', from: '/metadata/labels/tier', path: '/metadata/annotations/tier' },
      { op: 'move', from: '/metadata/annotations/tier', path: '/metadata/annotations/moved' },
    ]);
    expect(good.status).toBe(200);
    expect([good.json.metadata.labels.tier, good.json.spec.containers[0].image, good.json.metadata.annotations]).toEqual(['front', 'app:2', { moved: 'front', 'openshift.io/scc': 'anyuid' }]);
    const failed = await patch(`${base}/pods/web`, JSONP, [{ op: 'test', path: '/metadata/labels/app', value: 'db' }, { op: 'remove', path: '/metadata/labels' }]);
    expect([failed.status, failed.json.reason]).toEqual([422, 'Invalid']);
    expect((await s.request('GET', `${base}/pods/web`)).json.metadata.labels.app).toBe('web');
  });

  it('refuses an object body, an unknown op and a bad pointer with 400; a missing path with 422', async () => {
    expect((await patch(`${base}/pods/web`, JSONP, { op: 'add' })).status).toBe(400);
    expect((await patch(`${base}/pods/web`, JSONP, [{ op: 'frob', path: '/x' }])).status).toBe(400);
    expect((await patch(`${base}/pods/web`, JSONP, [{ op: 'add', path: 'no-slash', value: 1 }])).status).toBe(400);
    expect((await patch(`${base}/pods/web`, JSONP, [{ op: 'replace', path: '/metadata/nope/x', value: 1 }])).status).toBe(422);
    expect((await patch(`${base}/pods/web`, JSONP, '[{"op":')).status).toBe(400);
  });
});

describe('merge patch (RFC 7386)', () => {
  it('merges maps, deletes with null and replaces lists whole', async () => {
    const r = await patch(`${base}/services/svc`, MERGE, { metadata: { labels: { a: '1' } }, spec: { ports: [{ name: 'only', port: 8080 }], selector: null } });
    expect(r.status).toBe(200);
    expect(r.json.spec.ports.map((p: any) => p.port)).toEqual([8080]);
    expect(r.json.spec.selector).toBeUndefined();
    expect(r.json.metadata.labels).toEqual({ a: '1' });
  });
});

describe('strategic merge patch', () => {
  // A ReplicationController's pod template: a Pod's own spec is immutable but for images.
  const rc = `${base}/replicationcontrollers/rc`;
  const tpl = (spec: unknown) => ({ spec: { template: { spec } } });

  it('merges containers by name, env by name and container ports by containerPort', async () => {
    const r = await patch(rc, SMP, tpl({
      containers: [{ name: 'app', image: 'app:3', env: [{ name: 'B', value: 'two' }, { name: 'C', value: '3' }], ports: [{ containerPort: 443, name: 'tls' }] }],
    }));
    expect(r.status).toBe(200);
    const [app, side] = r.json.spec.template.spec.containers;
    expect([app.image, side.name]).toEqual(['app:3', 'side']);
    expect(app.env).toEqual([{ name: 'A', value: '1' }, { name: 'B', value: 'two' }, { name: 'C', value: '3' }]);
    expect(app.ports.map((p: any) => `${p.name ?? ''}:${p.containerPort}`)).toEqual([':80', 'tls:443']);
  });

  it('merges Service ports by port', async () => {
    await patch(`${base}/services/svc`, MERGE, { spec: { ports: [{ name: 'http', port: 80 }, { name: 'https', port: 443 }] } });
    const r = await patch(`${base}/services/svc`, SMP, { spec: { ports: [{ port: 443, name: 'tls' }, { port: 9000, name: 'metrics' }] } });
    expect(r.json.spec.ports.map((p: any) => `${p.name}:${p.port}`)).toEqual(['http:80', 'tls:443', 'metrics:9000']);
  });

  it('honours $patch: delete and replace, $retainKeys, $deleteFromPrimitiveList and $setElementOrder', async () => {
    const del = await patch(rc, SMP, tpl({ containers: [{ name: 'app', env: [{ name: 'A', $patch: 'delete' }] }] }));
    expect(del.json.spec.template.spec.containers[0].env.map((e: any) => e.name)).toEqual(['B', 'C']);
    const replace = await patch(`${base}/pods/web`, SMP, { metadata: { labels: { $patch: 'replace', only: 'this' } } });
    expect(replace.json.metadata.labels).toEqual({ only: 'this' });
    const retain = await patch(rc, SMP, tpl({ volumes: [{ name: 'data', $retainKeys: ['name', 'configMap'], configMap: { name: 'cm' } }] }));
    expect(retain.json.spec.template.spec.volumes).toEqual([{ name: 'data', configMap: expect.objectContaining({ name: 'cm' }) }]);
    const prim = await patch(`${base}/pods/web`, SMP, { metadata: { '$deleteFromPrimitiveList/finalizers': ['a.io/x'] } });
    expect(prim.json.metadata.finalizers).toEqual(['b.io/y']);
    const order = await patch(rc, SMP, tpl({ '$setElementOrder/containers': [{ name: 'app' }, { name: 'side' }], containers: [{ name: 'side', image: 'side:2' }] }));
    expect(order.json.spec.template.spec.containers.map((c: any) => `${c.name}=${c.image}`)).toEqual(['app=app:3', 'side=side:2']);
    const whole = await patch(rc, SMP, tpl({ containers: [{ $patch: 'replace' }, { name: 'solo', image: 'solo:1' }] }));
    expect(whole.json.spec.template.spec.containers.map((c: any) => c.name)).toEqual(['solo']);
    const bad = await patch(`${base}/pods/web`, SMP, { metadata: { $patch: 'explode' } });
    expect(bad.status).toBe(400);
  });

  it('replaces lists whole on a schemaless kind (no merge keys are known for it)', async () => {
    const dep = { apiVersion: 'apps.openshift.io/v1', kind: 'DeploymentConfig', metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ name: 'a', image: '1' }, { name: 'b', image: '1' }] } } } };
    expect((await s.request('POST', '/apis/apps.openshift.io/v1/namespaces/pt/deploymentconfigs', { body: dep })).status).toBe(201);
    const r = await patch('/apis/apps.openshift.io/v1/namespaces/pt/deploymentconfigs/d', SMP, { spec: { template: { spec: { containers: [{ name: 'b', image: '2' }] } } } });
    expect(r.json.spec.template.spec.containers).toEqual([{ name: 'b', image: '2' }]);
  });
});

describe('patch rules', () => {
  it('patches status through /status only, and ignores status on the main resource', async () => {
    const main = await patch(`${base}/pods/web`, MERGE, { status: { phase: 'Running' } });
    expect(main.json.status.phase).toBe('Pending');
    const st = await patch(`${base}/pods/web/status`, MERGE, { status: { phase: 'Running' }, spec: { nodeName: 'elsewhere' } });
    expect([st.status, st.json.status.phase, st.json.spec.nodeName]).toEqual([200, 'Running', undefined]);
    const ns = await patch('/api/v1/namespaces/pt/status', SMP, { status: { conditions: [{ type: 'Checked', status: 'True' }] } });
    expect(ns.json.status.conditions).toEqual([{ type: 'Checked', status: 'True' }]);
  });

  it('takes metadata.resourceVersion in a patch as a precondition: 409 when stale', async () => {
    const cur = (await s.request('GET', `${base}/pods/web`)).json.metadata.resourceVersion;
    const ok = await patch(`${base}/pods/web`, MERGE, { metadata: { resourceVersion: cur, labels: { v: '1' } } });
    expect(ok.status).toBe(200);
    const stale = await patch(`${base}/pods/web`, SMP, { metadata: { resourceVersion: cur, labels: { v: '2' } } });
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
    expect(stale.json.message).toBe('Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again');
  });

  it('refuses other content types with 415 and answers 404 for a missing object', async () => {
    for (const type of ['application/json', 'text/plain']) {
      const r = await patch(`${base}/pods/web`, type, { metadata: {} });
      expect([type, r.status, r.json.reason]).toEqual([type, 415, 'UnsupportedMediaType']);
    }
    expect((await patch(`${base}/pods/nope`, MERGE, { metadata: {} })).status).toBe(404);
  });
});
