/**
 * Server-side apply over real HTTP on SQLite: PATCH with application/apply-patch+yaml creates or
 * merges by field ownership, answers conflicts as kube-apiserver does, and the managedFields it
 * records follow later writes. Every malformed request is a Status, never a crash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { namespace, startTestServer, type TestServer } from '../support/helpers.js';

let s: TestServer;
const base = '/api/v1/namespaces/ap';
const APPLY = 'application/apply-patch+yaml';

const apply = (path: string, body: unknown, query = 'fieldManager=alice', headers: Record<string, string> = {}) =>
  s.request('PATCH', `${path}?${query}`, { body, headers: { 'content-type': APPLY, ...headers } });

const service = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', ...metadata }, spec,
});

const managers = (obj: { metadata: { managedFields?: { manager: string; operation: string; subresource?: string }[] } }) =>
  (obj.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`);

beforeAll(async () => {
  s = await startTestServer('sqlite');
  await s.request('POST', '/api/v1/namespaces', { body: namespace('ap') });
});
afterAll(() => s.close());

describe('server-side apply', () => {
  it('creates from a YAML configuration (201), then merges (200) and removes what the manager stopped applying', async () => {
    const yaml = [
      'apiVersion: v1', 'kind: Service', 'metadata:', '  name: web', '  labels: {app: web, tier: front}', 'spec:',
      '  selector: {app: web}', '  ports:', '  - {name: http, port: 80, targetPort: 8080}', '  - {name: https, port: 443}', '',
    ].join('\n');
    const created = await apply(`${base}/services/web`, yaml);
    expect(created.status).toBe(201);
    expect(created.json.spec.clusterIP).toMatch(/^10\./); // the kind's defaults and allocation ran
    expect(managers(created.json)).toEqual(['alice/Apply']);
    expect(created.json.metadata.managedFields[0].fieldsV1['f:spec']['f:ports']['k:{"port":80}']).toEqual({ '.': {}, 'f:name': {}, 'f:port': {}, 'f:targetPort': {} });

    const merged = await apply(`${base}/services/web`, service({ selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8081 }] }, { labels: { app: 'web' } }));
    expect(merged.status).toBe(200);
    expect(merged.json.metadata.labels).toEqual({ app: 'web' });
    expect(merged.json.spec.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP', targetPort: 8081 }]);
    expect(merged.json.spec.clusterIP).toBe(created.json.spec.clusterIP);
    const read = await s.request('GET', `${base}/services/web`);
    expect(read.json.metadata.managedFields).toEqual(merged.json.metadata.managedFields);
    expect(Number(merged.json.metadata.resourceVersion)).toBeGreaterThan(Number(created.json.metadata.resourceVersion));
  });

  it('answers a conflict with 409 and one FieldManagerConflict cause per field, and takes the field over with force=true', async () => {
    const other = service({ ports: [{ name: 'http', port: 80, targetPort: 9090 }] });
    const refused = await apply(`${base}/services/web`, other, 'fieldManager=bob');
    expect([refused.status, refused.json.kind, refused.json.reason]).toEqual([409, 'Status', 'Conflict']);
    expect(refused.json.message).toBe('Apply failed with 1 conflict: conflict with "alice": .spec.ports[port=80].targetPort');
    expect(refused.json.details.causes).toEqual([
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.ports[port=80].targetPort' },
    ]);
    expect((await s.request('GET', `${base}/services/web`)).json.spec.ports[0].targetPort).toBe(8081);

    const forced = await apply(`${base}/services/web`, other, 'fieldManager=bob&force=true');
    expect(forced.status).toBe(200);
    expect(forced.json.spec.ports[0].targetPort).toBe(9090);
    expect(managers(forced.json)).toEqual(['alice/Apply', 'bob/Apply']);
    // Alice re-applies without targetPort: Bob's value stays, because it is his now.
    const again = await apply(`${base}/services/web`, service({ selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] }, { labels: { app: 'web' } }));
    expect([again.status, again.json.spec.ports[0].targetPort]).toEqual([200, 9090]);
  });

  it('records later writes for their manager: fieldManager, else the User-Agent product; an empty list clears', async () => {
    const labelled = await s.request('PATCH', `${base}/services/web?fieldManager=kubectl-label`, {
      body: { metadata: { labels: { extra: '1' } } }, headers: { 'content-type': 'application/merge-patch+json' },
    });
    expect(labelled.status).toBe(200);
    expect(managers(labelled.json)).toContain('kubectl-label/Update');

    const current = labelled.json;
    delete current.metadata.managedFields;
    current.spec.selector = { app: 'api' };
    const replaced = await s.request('PUT', `${base}/services/web`, { body: current, headers: { 'user-agent': 'deployer/2.1 (linux)' } });
    expect(replaced.status).toBe(200);
    expect(managers(replaced.json)).toEqual(['alice/Apply', 'bob/Apply', 'kubectl-label/Update', 'deployer/Update']);
    const alice = replaced.json.metadata.managedFields.find((e: { manager: string }) => e.manager === 'alice');
    expect(alice.fieldsV1['f:spec']['f:selector']).toBeUndefined();

    // Alice applies her old selector again: Deployer owns it now, so that is a conflict with an Update owner.
    const conflict = await apply(`${base}/services/web`, service({ selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] }, { labels: { app: 'web' } }));
    expect(conflict.status).toBe(409);
    expect(conflict.json.message).toMatch(/^Apply failed with 1 conflict: conflict with "deployer" using v1 at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: \.spec\.selector\.app$/);

    const cleared = await s.request('PUT', `${base}/services/web`, { body: { ...replaced.json, metadata: { ...replaced.json.metadata, managedFields: [] } } });
    expect([cleared.status, cleared.json.metadata.managedFields]).toEqual([200, undefined]);
  });

  it('applies to /status as its own manager without touching the spec', async () => {
    await apply(`${base}/pods/p`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'app:1' }] } });
    const status = await apply(`${base}/pods/p/status`, {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'other:9' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    }, 'fieldManager=kubelet');
    expect(status.status).toBe(200);
    expect([status.json.status.phase, status.json.spec.containers[0].image]).toEqual(['Running', 'app:1']);
    expect(managers(status.json)).toEqual(['alice/Apply', 'kubelet/Apply/status']);
    const kubelet = status.json.metadata.managedFields[1];
    expect(Object.keys(kubelet.fieldsV1)).toEqual(['f:status']);
    expect((await apply(`${base}/pods/missing/status`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'missing' } })).status).toBe(404);
  });

  it('serves dry runs, schemaless kinds and the resourceVersion precondition', async () => {
    const dry = await apply(`${base}/services/dry`, service({ ports: [{ port: 1 }] }, { name: 'dry' }), 'fieldManager=alice&dryRun=All');
    expect(dry.status).toBe(201);
    expect((await s.request('GET', `${base}/services/dry`)).status).toBe(404);

    const deploy = (replicas: number) => ({ apiVersion: 'apps.openshift.io/v1', kind: 'DeploymentConfig', metadata: { name: 'd' }, spec: { replicas, template: { spec: { containers: [{ name: 'a', image: 'i' }] } } } });
    expect((await apply('/apis/apps.openshift.io/v1/namespaces/ap/deploymentconfigs/d', deploy(1))).status).toBe(201);
    const scaled = await apply('/apis/apps.openshift.io/v1/namespaces/ap/deploymentconfigs/d', deploy(3));
    expect([scaled.status, scaled.json.spec.replicas]).toEqual([200, 3]);

    const stale = await apply(`${base}/services/web`, service({}, { resourceVersion: '1' }));
    expect([stale.status, stale.json.reason]).toEqual([409, 'Conflict']);
  });
});

describe('malformed apply requests', () => {
  it.each([
    ['no fieldManager', '', service({}), 422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'],
    ['a fieldManager over 128 bytes', `fieldManager=${'m'.repeat(129)}`, service({}), 422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'],
    ['a control character in fieldManager', 'fieldManager=a%0Ab', service({}), 422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Invalid value: "a\\nb": invalid character U+000A (at position 1)'],
    ['a list body', 'fieldManager=a', [service({})], 400, 'the applied configuration must be an object'],
    ['another name', 'fieldManager=a', service({}, { name: 'other' }), 400, 'the name of the object (other) does not match the name on the URL (web)'],
    ['another kind', 'fieldManager=a', { ...service({}), kind: 'Pod' }, 400, 'the object provided is unrecognized (must be of type Service): kind "Pod"'],
    ['managedFields set', 'fieldManager=a', service({}, { managedFields: [] }), 400, 'metadata.managedFields must be nil'],
  ])('%s', async (_what, query, body, code, message) => {
    const r = await apply(`${base}/services/web`, body, query);
    expect([r.status, r.json.kind, r.json.message]).toEqual([code, 'Status', message]);
  });

  it('refuses malformed YAML with 400 and force on a non-apply patch with 422, and stays up', async () => {
    const yaml = await apply(`${base}/services/web`, 'metadata: [unclosed');
    expect([yaml.status, yaml.json.reason]).toEqual([400, 'BadRequest']);
    const force = await s.request('PATCH', `${base}/services/web?force=true`, { body: { metadata: {} }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect([force.status, force.json.message]).toEqual([422, 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch']);
    expect((await s.request('GET', `${base}/services/web`)).status).toBe(200);
  });
});
