/**
 * CustomResourceDefinitions over HTTP on memory and SQLite: a CRD is served within a second, its
 * custom resources are pruned, defaulted and validated as Kubernetes does (messages and paths), its
 * subresources, columns, selectable fields and list types work, malformed CRDs are refused with
 * Kubernetes' causes, and deleting the CRD removes its objects and ends its watches.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Backends, openWatch, startTestServer, type TestServer } from '../support/helpers.js';
import { widget, widgetCrd } from '../support/crd-fixtures.js';
import { until } from '../../testing/src/poll.js';

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const widgets = '/apis/example.com/v1/namespaces/default/widgets';
const TableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io';

const causes = (reply: { json: any }) => (reply.json.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`);

describe.each(Backends)('CustomResourceDefinitions on %s', (backend) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(backend);
    const created = await s.request('POST', crdPath, { body: widgetCrd });
    expect(created.status).toBe(201);
    await until('widgets served', async () => (await s.request('GET', widgets)).status === 200, { timeoutMs: 5_000 });
  });
  afterAll(() => s?.close());

  it('is named and established, and listed in discovery with short names and categories', async () => {
    const crd = (await s.request('GET', `${crdPath}/widgets.example.com`)).json;
    const conditions = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, [c.status, c.reason]]));
    expect(conditions).toEqual({ NamesAccepted: ['True', 'NoConflicts'], Established: ['True', 'InitialNamesAccepted'] });
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wg'] });
    expect(crd.status.storedVersions).toEqual(['v1']);
    const list = (await s.request('GET', '/apis/example.com/v1')).json;
    expect(list.resources.map((r: any) => r.name)).toEqual(['widgets', 'widgets/status', 'widgets/scale']);
    expect(list.resources[0]).toMatchObject({ kind: 'Widget', namespaced: true, shortNames: ['wg'], categories: ['all', 'toys'] });
    expect(list.resources[2]).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
    expect((await s.request('GET', '/apis/example.com')).json.preferredVersion.version).toBe('v1');
  });

  it('serves both versions as one object set (conversion None), each under its own schema', async () => {
    const legacy = '/apis/example.com/v1beta1/namespaces/default/widgets';
    const created = await s.request('POST', legacy, { body: widget('old', { color: 'red', legacy: true }, 'v1beta1') });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ apiVersion: 'example.com/v1beta1', spec: { color: 'red', legacy: true, replicas: 1 } });
    const asV1 = (await s.request('GET', `${widgets}/old`)).json;
    expect(asV1.apiVersion).toBe('example.com/v1');
    expect(asV1.metadata.uid).toBe(created.json.metadata.uid);
    const listed = (await s.request('GET', legacy)).json;
    expect(listed.items.map((o: any) => [o.apiVersion, o.metadata.name])).toContainEqual(['example.com/v1beta1', 'old']);
    const stored = await s.storage.get('/registry/widgets.example.com/default/old');
    expect(JSON.parse(Buffer.from(stored!.value).toString()).apiVersion).toBe('example.com/v1');
    expect((await s.request('DELETE', `${legacy}/old`)).status).toBe(200);
  });

  it('prunes unknown fields, keeps preserved ones, and applies defaults', async () => {
    const body = widget('pruned', { color: 'red', unknown: 1, extra: { anything: { deep: true } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', junk: 1 }, spec: {} } });
    const created = await s.request('POST', widgets, { body: { ...body, topLevelJunk: true } });
    expect(created.status).toBe(201);
    expect(created.json.spec).toEqual({ color: 'red', replicas: 1, extra: { anything: { deep: true } }, template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} } });
    expect(created.json.topLevelJunk).toBeUndefined();
    const nulls = await s.request('POST', widgets, { body: widget('nulls', { color: 'red', replicas: null, name: null, note: null }) });
    expect(nulls.json.spec).toEqual({ color: 'red', replicas: 1, note: null });
  });

  it('refuses objects that fail their schema with Kubernetes messages and paths', async () => {
    const bad = await s.request('POST', widgets, {
      body: widget('bad', { color: 'purple', replicas: 'three', name: 'ABC', url: 'not a uri', size: true, ports: [{ port: 1 }], template: { spec: {} } }),
    });
    expect(bad.status).toBe(422);
    expect(bad.json.reason).toBe('Invalid');
    expect(bad.json.message).toMatch(/^Widget\.example\.com "bad" is invalid: \[/);
    expect(causes(bad)).toEqual(expect.arrayContaining([
      'spec.color: Unsupported value: "purple": supported values: "red", "green", "blue"',
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'",
      'spec.url: Invalid value: "not a uri": spec.url in body must be of type uri: "not a uri"',
      'spec.size: Invalid value: "boolean": spec.size in body must be of type integer,string: "boolean"',
      'spec.ports[0].name: Required value',
      'spec.template.apiVersion: Required value: must not be empty',
      'spec.template.kind: Required value: must not be empty',
    ]));
    const missing = await s.request('POST', widgets, { body: widget('missing', { replicas: 101 }) });
    expect(causes(missing)).toEqual(['spec.color: Required value', 'spec.replicas: Invalid value: 101: spec.replicas in body should be less than or equal to 100']);
    expect(missing.json.details.causes[0].reason).toBe('FieldValueRequired');
    expect((await s.request('GET', `${widgets}/bad`)).status).toBe(404);
  });

  it('keeps status to the status subresource, and bumps generation on spec changes only', async () => {
    await s.request('POST', widgets, { body: { ...widget('st'), status: { phase: 'Ignored' } } });
    const st = (await s.request('GET', `${widgets}/st`)).json;
    expect(st.status).toBeUndefined();
    const put = await s.request('PUT', `${widgets}/st/status`, { body: { ...st, spec: { color: 'blue' }, status: { phase: 'Running', replicas: 2 } } });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ spec: { color: 'red' }, status: { phase: 'Running' }, metadata: { generation: 1 } });
    const main = await s.request('PATCH', `${widgets}/st`, { body: { spec: { color: 'green' }, status: { phase: 'Lost' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(main.json).toMatchObject({ spec: { color: 'green' }, status: { phase: 'Running' }, metadata: { generation: 2 } });
    const badStatus = await s.request('PATCH', `${widgets}/st/status`, { body: { status: { replicas: 'x' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(causes(badStatus)).toEqual(['status.replicas: Invalid value: "string": status.replicas in body must be of type integer: "string"']);
  });

  it('serves scale from the replica paths, and writes through it under the schema', async () => {
    await s.request('POST', widgets, { body: widget('sc', { color: 'red', replicas: 2 }) });
    await s.request('PATCH', `${widgets}/sc/status`, { body: { status: { replicas: 2, selector: 'app=sc' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    const scale = (await s.request('GET', `${widgets}/sc/scale`)).json;
    expect(scale).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=sc' } });
    const scaled = await s.request('PATCH', `${widgets}/sc/scale`, { body: { spec: { replicas: 5 } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(scaled.json.spec.replicas).toBe(5);
    expect((await s.request('GET', `${widgets}/sc`)).json.spec.replicas).toBe(5);
    const tooMany = await s.request('PUT', `${widgets}/sc/scale`, { body: { ...scale, metadata: { name: 'sc' }, spec: { replicas: 500 } } });
    expect(causes(tooMany)).toEqual(['spec.replicas: Invalid value: 500: spec.replicas in body should be less than or equal to 100']);
  });

  it('prints its columns in Tables, wide ones with priority', async () => {
    await s.request('POST', widgets, { body: widget('cols', { color: 'blue', replicas: 3, name: 'shown' }) });
    const table = (await s.request('GET', `${widgets}/cols`, { headers: { accept: TableAccept } })).json;
    expect(table.columnDefinitions.map((c: any) => [c.name, c.type, c.priority])).toEqual([
      ['Name', 'string', 0], ['Color', 'string', 0], ['Replicas', 'integer', 0], ['Phase', 'string', 0], ['Age', 'date', 0], ['Name', 'string', 1],
    ]);
    expect(table.rows[0].cells).toEqual(['cols', 'blue', 3, null, expect.stringMatching(/^\d+s$/), 'shown']);
  });

  it('filters by selectable fields and refuses other field labels', async () => {
    const green = await s.request('GET', `${widgets}?fieldSelector=spec.color%3Dgreen`);
    expect(green.json.items.map((o: any) => o.metadata.name)).toEqual(['st']);
    const bad = await s.request('GET', `${widgets}?fieldSelector=spec.replicas%3D1`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('field label not supported: spec.replicas');
  });

  it('answers strategic merge with 415 and refuses protobuf bodies, as for custom resources', async () => {
    const smp = await s.request('PATCH', `${widgets}/cols`, { body: { spec: {} }, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
    expect(smp.status).toBe(415);
    expect(smp.json.message).toContain('accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml');
    const pb = await s.request('POST', widgets, { body: Buffer.from([0x6b, 0x38, 0x73, 0x00]), headers: { 'content-type': 'application/vnd.kubernetes.protobuf' } });
    expect(pb.status).toBe(415);
    const onlyPb = await s.request('GET', `${widgets}/cols`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(onlyPb.status).toBe(406);
  });

  it('merges lists by x-kubernetes-list-map-keys in server-side apply', async () => {
    const apply = (manager: string, ports: object[]) => s.request('PATCH', `${widgets}/ssa?fieldManager=${manager}`, {
      body: { ...widget('ssa'), spec: { color: 'red', ports } },
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    expect((await apply('a', [{ name: 'http', port: 80 }])).status).toBe(201);
    const merged = await apply('b', [{ name: 'grpc', port: 90 }]);
    expect(merged.json.spec.ports).toEqual([{ name: 'http', port: 80 }, { name: 'grpc', port: 90 }]);
    const fields = merged.json.metadata.managedFields.find((e: any) => e.manager === 'b').fieldsV1;
    expect(Object.keys(fields['f:spec']['f:ports'])).toContain('k:{"name":"grpc"}');
  });

  it('refuses malformed CRDs with the causes Kubernetes gives', async () => {
    const crd = (name: string, spec: Record<string, unknown>) => ({ ...widgetCrd, metadata: { name }, spec: { ...widgetCrd.spec, ...spec } });
    const mismatch = await s.request('POST', crdPath, { body: crd('gadgets.example.com', {}) });
    expect(mismatch.status).toBe(422);
    expect(causes(mismatch)).toEqual(['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group']);
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { properties: { a: { type: 'string' } }, anyOf: [{ type: 'object' }] } } } };
    const nonStructural = await s.request('POST', crdPath, {
      body: crd('things.example.com', { names: { plural: 'things', kind: 'Thing' }, versions: [{ name: 'v1', served: true, storage: true, schema }] }),
    });
    expect(causes(nonStructural)).toEqual([
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural',
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields',
    ]);
    const scope = await s.request('PATCH', `${crdPath}/widgets.example.com`, { body: { spec: { scope: 'Cluster' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(causes(scope)).toEqual(['spec.scope: Invalid value: "Cluster": field is immutable']);
    const twoStorage = await s.request('POST', crdPath, { body: crd('pairs.example.com', { names: { plural: 'pairs', kind: 'Pair' }, versions: [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: true, schema }] }) });
    expect(causes(twoStorage)).toContain('spec.versions: Invalid value: ["v1","v2"]: must have exactly one version marked as storage version');
    expect((await s.request('GET', '/apis/example.com/v9/namespaces/default/widgets')).status).toBe(404);
    expect((await s.request('GET', widgets)).status).toBe(200);
  });

  it('evaluates x-kubernetes-validations (CEL) with Kubernetes messages, reasons, field paths and transition rules', async () => {
    const spec = {
      type: 'object',
      properties: {
        min: { type: 'integer' }, max: { type: 'integer' }, name: { type: 'string' },
        tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 20 } },
      },
      'x-kubernetes-validations': [
        { rule: 'self.min <= self.max', message: 'min must not exceed max' },
        { rule: 'self.name == oldSelf.name', message: 'name is immutable', reason: 'FieldValueForbidden' },
        { rule: "!has(self.tags) || self.tags.all(t, t.startsWith('x-'))", messageExpression: "'tags must start with x-, got ' + string(size(self.tags))", fieldPath: '.tags' },
      ],
    };
    const schema = { openAPIV3Schema: { type: 'object', properties: { spec }, 'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('l')" }] } };
    const crd = { ...widgetCrd, metadata: { name: 'limits.example.com' }, spec: { ...widgetCrd.spec, names: { plural: 'limits', kind: 'Limit' }, versions: [{ name: 'v1', served: true, storage: true, schema }] } };
    expect((await s.request('POST', crdPath, { body: crd })).status).toBe(201);
    const limits = '/apis/example.com/v1/namespaces/default/limits';
    await until('limits served', async () => (await s.request('GET', limits)).status === 200, { timeoutMs: 5_000 });
    const limit = (name: string, body: object) => ({ apiVersion: 'example.com/v1', kind: 'Limit', metadata: { name }, spec: body });
    const bad = await s.request('POST', limits, { body: limit('low', { min: 5, max: 1, name: 'a', tags: ['y'] }) });
    expect(bad.status).toBe(422);
    expect(causes(bad)).toEqual(['spec: Invalid value: "object": min must not exceed max', 'spec.tags: Invalid value: "object": tags must start with x-, got 1']);
    const root = await s.request('POST', limits, { body: limit('other', { min: 1, max: 2 }) });
    expect(causes(root)).toEqual(['<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith(\'l\')']);
    expect((await s.request('POST', limits, { body: limit('l1', { min: 1, max: 2, name: 'a', tags: ['x-1'] }) })).status).toBe(201);
    const renamed = await s.request('PATCH', `${limits}/l1`, { body: { spec: { name: 'b' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(causes(renamed)).toEqual(['spec: Forbidden: name is immutable']);
    const typeError = await s.request('PATCH', `${limits}/l1`, { body: { spec: { min: 'x' } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(causes(typeError)).toContain('<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation');
    const ruleCrd = (name: string, rule: string, extra: object = {}) => ({
      ...crd, metadata: { name: `${name}s.example.com` },
      spec: { ...crd.spec, names: { plural: `${name}s`, kind: name[0]!.toUpperCase() + name.slice(1) }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } }, 'x-kubernetes-validations': [{ rule, ...extra }] } } } } }] },
    });
    const field = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]';
    expect(causes(await s.request('POST', crdPath, { body: ruleCrd('syntax', 'self.items ==') }))).toEqual([expect.stringMatching(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}\.rule: Invalid value: "self\.items ==": compilation failed: ERROR: `))]);
    expect(causes(await s.request('POST', crdPath, { body: ruleCrd('sorted', "self.items.isSorted() && url('https://x') == null") }))[0]).toContain("undeclared reference to 'url'");
    const costly = causes(await s.request('POST', crdPath, { body: ruleCrd('costly', 'self.items.all(a, self.items.all(b, a != b || a == b))') }));
    expect(costly).toEqual([`${field}.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`]);
    expect(causes(await s.request('POST', crdPath, { body: ruleCrd('reason', 'true', { reason: 'Nope' }) }))).toEqual([`${field}.reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`]);
  });

  it('accepts no name another CRD of the group holds, as the naming controller', async () => {
    const clash = { ...widgetCrd, metadata: { name: 'others.example.com' }, spec: { ...widgetCrd.spec, names: { plural: 'others', kind: 'Widget', shortNames: ['wg'] } } };
    expect((await s.request('POST', crdPath, { body: clash })).status).toBe(201);
    const crd = await until('the conditions of others.example.com', async () => {
      const c = (await s.request('GET', `${crdPath}/others.example.com`)).json;
      return c.status.conditions.length > 0 && c;
    }, { timeoutMs: 5_000 });
    const conditions = Object.fromEntries(crd.status.conditions.map((c: any) => [c.type, [c.status, c.reason, c.message]]));
    expect(conditions.NamesAccepted).toEqual(['False', 'ListKindConflict', '"WidgetList" is already in use']);
    expect(conditions.Established).toEqual(['False', 'NotAccepted', 'not all names are accepted']);
    expect(crd.status.acceptedNames).toMatchObject({ plural: 'others' });
    expect((await s.request('GET', '/apis/example.com/v1/namespaces/default/others')).status).toBe(404);
    expect((await s.request('DELETE', `${crdPath}/others.example.com`)).status).toBe(200);
  });

  it('follows a CRD update: a default added later is applied when older objects are read', async () => {
    await s.request('POST', widgets, { body: widget('before', { color: 'red' }) });
    const patch = [{ op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/color/default', value: 'green' },
      { op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/shape', value: { type: 'string', default: 'round' } }];
    const updated = await s.request('PATCH', `${crdPath}/widgets.example.com`, { body: patch, headers: { 'content-type': 'application/json-patch+json' } });
    expect(updated.status).toBe(200);
    const read = await until('the new default on the older object', async () => {
      const o = (await s.request('GET', `${widgets}/before`)).json;
      return o.spec.shape === 'round' && o;
    }, { timeoutMs: 5_000 });
    expect(read.spec).toMatchObject({ color: 'red', shape: 'round' });
    const listed = (await s.request('GET', widgets)).json.items.find((o: any) => o.metadata.name === 'before');
    expect(listed.spec.shape).toBe('round');
  });

  it('on delete removes every custom resource, ends open watches and stops serving', async () => {
    const crd = { ...widgetCrd, metadata: { name: 'gizmos.example.com' }, spec: { ...widgetCrd.spec, names: { plural: 'gizmos', kind: 'Gizmo' }, versions: [widgetCrd.spec.versions[0]] } };
    expect((await s.request('POST', crdPath, { body: crd })).status).toBe(201);
    const gizmos = '/apis/example.com/v1/namespaces/default/gizmos';
    await until('gizmos served', async () => (await s.request('GET', gizmos)).status === 200, { timeoutMs: 5_000 });
    for (const n of ['a', 'b']) expect((await s.request('POST', gizmos, { body: { ...widget(n), kind: 'Gizmo' } })).status).toBe(201);
    const watch = await openWatch(s, `${gizmos}?watch=true`);
    expect((await watch.next()).type).toBe('ADDED');
    expect((await watch.next()).type).toBe('ADDED');
    const deleted = await s.request('DELETE', `${crdPath}/gizmos.example.com`);
    expect(deleted.status).toBe(200);
    expect(deleted.json.metadata.finalizers).toEqual(['customresourcecleanup.apiextensions.k8s.io']);
    expect(deleted.json.status.conditions.find((c: any) => c.type === 'Terminating')).toMatchObject({ status: 'True', reason: 'InstanceDeletionPending' });
    const events: string[] = [];
    for (let e = await watch.next(); e; e = await watch.next()) events.push(e.type);
    // The stream ends once the resource is no longer served; what it delivered before were the deletions.
    expect(['DELETED', 'DELETED'].slice(0, events.length)).toEqual(events);
    await until('the gizmos CRD gone', async () => (await s.request('GET', `${crdPath}/gizmos.example.com`)).status === 404, { timeoutMs: 5_000 });
    expect((await s.request('GET', gizmos)).status).toBe(404);
    const left = await s.storage.list({ prefix: '/registry/gizmos.example.com/', revision: 0, limit: 0 });
    expect(left.items).toEqual([]);
    expect((await s.request('GET', widgets)).json.items.length).toBeGreaterThan(0);
  });

  it('deletes several CRDs deleted at once, each with its objects (kubectl delete -f of a directory)', async () => {
    const kinds = ['Alpha', 'Beta', 'Gamma'];
    const paths = kinds.map((k) => `/apis/example.com/v1/namespaces/default/${k.toLowerCase()}s`);
    for (const kind of kinds) {
      const plural = `${kind.toLowerCase()}s`;
      const crd = { ...widgetCrd, metadata: { name: `${plural}.example.com` }, spec: { ...widgetCrd.spec, names: { plural, kind }, versions: [widgetCrd.spec.versions[0]] } };
      expect((await s.request('POST', crdPath, { body: crd })).status).toBe(201);
    }
    for (const [i, path] of paths.entries()) {
      await until(`${path} served`, async () => (await s.request('GET', path)).status === 200, { timeoutMs: 5_000 });
      expect((await s.request('POST', path, { body: { ...widget('one'), kind: kinds[i] } })).status).toBe(201);
    }
    // Back to back, as kubectl sends them: each deletion lands while the controller works on the others.
    for (const kind of kinds) expect((await s.request('DELETE', `${crdPath}/${kind.toLowerCase()}s.example.com`)).status).toBe(200);
    for (const [i, kind] of kinds.entries()) {
      await until(`the ${kind} CRD gone`, async () => (await s.request('GET', `${crdPath}/${kind.toLowerCase()}s.example.com`)).status === 404, { timeoutMs: 15_000 });
      expect((await s.request('GET', paths[i]!)).status).toBe(404);
    }
  });
});
