/**
 * apiextensions.k8s.io/v1beta1 CustomResourceDefinitions, as Kubernetes 1.16-1.21 served them beside
 * v1: the same objects in either shape (top-level `version`, `validation`, `subresources` and
 * `additionalPrinterColumns`, columns' `JSONPath`, the webhook beside the strategy,
 * `preserveUnknownFields` true by default), their custom resources served, and malformed v1beta1 CRDs
 * refused with Kubernetes' causes. kubectl applies one and reads it back through both versions.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, startTestServer, type KubectlServer, type TestServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const kubectlBin = '/usr/bin/kubectl';
const v1 = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const v1beta1 = '/apis/apiextensions.k8s.io/v1beta1/customresourcedefinitions';

const gadgetsYaml = `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  version: v1
  names: {plural: gadgets, kind: Gadget, shortNames: [gd]}
  preserveUnknownFields: false
  validation:
    openAPIV3Schema:
      type: object
      properties:
        spec:
          type: object
          properties:
            size: {type: integer, minimum: 1}
  subresources:
    status: {}
  additionalPrinterColumns:
  - {name: Size, type: integer, JSONPath: .spec.size}
`;

const gadget = `apiVersion: example.com/v1
kind: Gadget
metadata: {name: g1, namespace: default}
spec: {size: 3, unknown: pruned}
`;

/** A v1beta1 CRD in the Python client's e2e shape: no schema, so every field is kept. */
const schemaless = (name = 'things') => ({
  apiVersion: 'apiextensions.k8s.io/v1beta1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${name}.example.org` },
  spec: { group: 'example.org', version: 'v1', scope: 'Cluster', names: { plural: name, kind: 'Thing' }, subresources: { status: {} } },
});

const schema = { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string' } } } } } };

const causes = (reply: { json: any }) => (reply.json.details?.causes ?? []).map((c: any) => `${c.field}: ${c.message}`);

describe.runIf(existsSync(kubectlBin))('kubectl with a v1beta1 CustomResourceDefinition', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl(kubectlBin, k.env, args);
  const raw = async (path: string) => JSON.parse((await kubectl('get', '--raw', path)).stdout);

  beforeAll(async () => {
    k = await startKubectlServer();
    writeFileSync(join(k.dir, 'gadgets.yaml'), gadgetsYaml);
    writeFileSync(join(k.dir, 'gadget.yaml'), gadget);
  });
  afterAll(() => k?.close());

  it('applies it, established, and reads it as v1 with every top-level field in its version', async () => {
    const applied = await kubectl('apply', '-f', join(k.dir, 'gadgets.yaml'));
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/gadgets.example.com created');
    expect((await kubectl('wait', '--for=condition=Established', '--timeout=10s', 'crd/gadgets.example.com')).stdout).toContain('condition met');
    const asV1 = await raw(`${v1}/gadgets.example.com`);
    expect(asV1.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(asV1.spec).not.toHaveProperty('validation');
    expect(asV1.spec).not.toHaveProperty('version');
    expect(asV1.spec).not.toHaveProperty('preserveUnknownFields');
    expect(asV1.spec.scope).toBe('Namespaced');
    expect(asV1.spec.versions).toEqual([{
      name: 'v1', served: true, storage: true,
      schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } } } } } },
      subresources: { status: {} },
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
    }]);
    expect(asV1.status.storedVersions).toEqual(['v1']);
  });

  it('reads it back as v1beta1, per-version fields alike hoisted to the top level', async () => {
    const asBeta = await raw(`${v1beta1}/gadgets.example.com`);
    expect(asBeta.apiVersion).toBe('apiextensions.k8s.io/v1beta1');
    expect(asBeta.spec).toMatchObject({
      version: 'v1', preserveUnknownFields: false, subresources: { status: {} },
      additionalPrinterColumns: [{ name: 'Size', type: 'integer', JSONPath: '.spec.size' }],
      validation: { openAPIV3Schema: { type: 'object' } },
      conversion: { strategy: 'None' },
    });
    expect(asBeta.spec.versions).toEqual([{ name: 'v1', served: true, storage: true }]);
  });

  it('serves its custom resources: pruned, validated, printed with the column', async () => {
    // kubectl refuses the unknown field itself (client-side validation against /openapi/v2, as against
    // kube-apiserver's strict field validation): --validate=false lets the server prune it.
    expect((await kubectl('apply', '--validate=false', '-f', join(k.dir, 'gadget.yaml'))).stderr).toBe('');
    expect((await raw('/apis/example.com/v1/namespaces/default/gadgets/g1')).spec).toEqual({ size: 3 });
    expect((await kubectl('get', 'gd')).stdout).toMatch(/^NAME\s+SIZE\ng1\s+3\n$/);
    const bad = await kubectl('patch', 'gadget', 'g1', '--type=merge', '-p', '{"spec":{"size":0}}');
    expect(bad.stderr).toContain('spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1');
  });

  it('takes a second kubectl apply of the v1beta1 manifest', async () => {
    writeFileSync(join(k.dir, 'gadgets.yaml'), gadgetsYaml.replace('shortNames: [gd]', 'shortNames: [gd, gdt]'));
    const applied = await kubectl('apply', '-f', join(k.dir, 'gadgets.yaml'));
    expect(applied.stderr).toBe('');
    expect(applied.stdout).toContain('customresourcedefinition.apiextensions.k8s.io/gadgets.example.com configured');
    expect((await raw(`${v1}/gadgets.example.com`)).spec.names.shortNames).toEqual(['gd', 'gdt']);
  });

  it('takes a v1 update and shows a second version with its own schema per version in v1beta1', async () => {
    const crd = await raw(`${v1}/gadgets.example.com`);
    const other = { ...crd.spec.versions[0], name: 'v2', storage: false, schema };
    crd.spec.versions.push(other);
    writeFileSync(join(k.dir, 'v1.json'), JSON.stringify(crd));
    expect((await kubectl('replace', '-f', join(k.dir, 'v1.json'))).stderr).toBe('');
    const asBeta = await raw(`${v1beta1}/gadgets.example.com`);
    expect(asBeta.spec).not.toHaveProperty('validation');
    expect(asBeta.spec.versions.map((v: any) => [v.name, Object.keys(v.schema.openAPIV3Schema.properties.spec.properties)])).toEqual([['v1', ['size']], ['v2', ['a']]]);
    expect(asBeta.spec.subresources).toEqual({ status: {} });
    expect(asBeta.spec.additionalPrinterColumns).toEqual([{ name: 'Size', type: 'integer', JSONPath: '.spec.size' }]);
  });
});

describe('v1beta1 CustomResourceDefinitions over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
  });
  afterAll(() => s?.close());

  it('defaults what v1beta1 defaults, and keeps every field of a schemaless CRD\'s objects', async () => {
    const created = await s.request('POST', v1beta1, { body: schemaless() });
    expect(created.status).toBe(201);
    expect(created.json.spec).toMatchObject({
      version: 'v1', versions: [{ name: 'v1', served: true, storage: true }], preserveUnknownFields: true,
      names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' }, conversion: { strategy: 'None' },
    });
    expect((await s.request('GET', `${v1}/things.example.org`)).json.spec).toMatchObject({ preserveUnknownFields: true, versions: [{ name: 'v1', subresources: { status: {} } }] });
    const things = '/apis/example.org/v1/things';
    await until('the CRD served', async () => (await s.request('GET', things)).status === 200, { timeoutMs: 15_000 });
    const thing = await s.request('POST', things, { body: { apiVersion: 'example.org/v1', kind: 'Thing', metadata: { name: 't' }, spec: { size: 2, any: { deep: true } } } });
    expect(thing.status).toBe(201);
    expect(thing.json.spec).toEqual({ size: 2, any: { deep: true } });
    expect((await s.request('PUT', `${things}/t/status`, { body: { ...thing.json, status: { ok: 1 } } })).json.status).toEqual({ ok: 1 });
  });

  it('lets v1 update a CRD stored without schemas (no tighter than it was stored), and deletes it', async () => {
    const label = await s.request('PATCH', `${v1}/things.example.org`, { body: { metadata: { labels: { a: 'b' } } }, headers: { 'content-type': 'application/merge-patch+json' } });
    expect(label.status).toBe(200);
    expect((await s.request('DELETE', `${v1}/things.example.org`)).status).toBe(200);
    await until('the CRD gone', async () => (await s.request('GET', `${v1}/things.example.org`)).status === 404, { timeoutMs: 15_000 });
  });

  it('moves a conversion webhook under conversion.webhook for v1, and back', async () => {
    const body = schemaless('hooks');
    const spec = { ...body.spec, preserveUnknownFields: false, validation: schema, versions: [{ name: 'v1', served: true, storage: true }, { name: 'v2', served: true, storage: false }],
      conversion: { strategy: 'Webhook', webhookClientConfig: { service: { namespace: 'default', name: 'conv' } } } };
    const created = await s.request('POST', v1beta1, { body: { ...body, spec } });
    expect(created.status).toBe(201);
    expect(created.json.spec.conversion).toEqual({ strategy: 'Webhook', webhookClientConfig: { service: { namespace: 'default', name: 'conv', port: 443 } }, conversionReviewVersions: ['v1beta1'] });
    const asV1 = (await s.request('GET', `${v1}/hooks.example.org`)).json.spec;
    expect(asV1.conversion).toEqual({ strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'default', name: 'conv', port: 443 } }, conversionReviewVersions: ['v1beta1'] } });
    expect(asV1.versions.map((v: any) => v.schema)).toEqual([schema, schema]);
    expect(asV1).not.toHaveProperty('preserveUnknownFields');
  });

  it('refuses preserveUnknownFields true through v1 on create', async () => {
    const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'keeps.example.org' },
      spec: { group: 'example.org', scope: 'Cluster', names: { plural: 'keeps', kind: 'Keep' }, preserveUnknownFields: true, versions: [{ name: 'v1', served: true, storage: true, schema }] } };
    const r = await s.request('POST', v1, { body: crd });
    expect(r.status).toBe(422);
    expect(causes(r)).toEqual(['spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead']);
  });

  it.each([
    ['a version other than the first', { version: 'v2', versions: [{ name: 'v1', served: true, storage: true }] },
      ['spec.version: Invalid value: "v2": must match the first version in spec.versions']],
    ['top-level and per-version schemas', { validation: schema, versions: [{ name: 'v1', served: true, storage: true, schema }] },
      ['spec.validation: Forbidden: top-level and per-version schemas are mutually exclusive']],
    ['the same schema in every version', { version: undefined, versions: [{ name: 'v1', served: true, storage: true, schema }, { name: 'v2', served: true, storage: false, schema }] },
      [/^spec\.versions: Invalid value: .*: per-version schemas may not all be set to identical values \(top-level validation should be used instead\)$/]],
    ['pruning without a schema', { preserveUnknownFields: false },
      ['spec.versions[0].schema.openAPIV3Schema: Required value: because otherwise all fields are pruned']],
    ['a conversion webhook with unknown fields kept', { conversion: { strategy: 'Webhook', webhookClientConfig: { url: 'https://conv.example/' } } },
      ['spec.conversion.strategy: Invalid value: "Webhook": must be None if spec.preserveUnknownFields is true']],
    ['defaults with unknown fields kept', { validation: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { a: { type: 'string', default: 'x' } } } } } } },
      ['spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema']],
    ['a top-level column without a path', { additionalPrinterColumns: [{ name: 'A', type: 'string' }] },
      ['spec.additionalPrinterColumns[0].JSONPath: Required value']],
    ['a malformed top-level schema', { preserveUnknownFields: false, validation: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'objekt' } } } } },
      ['spec.validation.openAPIV3Schema.properties[spec].type: Unsupported value: "objekt": supported values: "array", "boolean", "integer", "number", "object", "string"']],
  ])('refuses %s with 422 and Kubernetes\' cause', async (_what, spec, expected) => {
    const body = schemaless('bad');
    const r = await s.request('POST', v1beta1, { body: { ...body, spec: { ...body.spec, ...spec } } });
    expect(r.status).toBe(422);
    expect(r.json).toMatchObject({ kind: 'Status', reason: 'Invalid' });
    expect(r.json.message).toContain('CustomResourceDefinition.apiextensions.k8s.io "bad.example.org" is invalid');
    for (const cause of expected) expect(causes(r)).toContainEqual(typeof cause === 'string' ? cause : expect.stringMatching(cause));
  });
});
