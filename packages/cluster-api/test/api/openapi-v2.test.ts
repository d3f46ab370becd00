/**
 * /openapi/v2: the schemas of /openapi/v3 as one Swagger 2.0 document, in JSON and in the protobuf form
 * client-go asks for, and kubectl 1.32 validating manifests against it (`--validate=strict`, the
 * default, with no server-side field validation offered) and computing apply's patches from it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeOpenApiV2 } from '../../src/http/openapi-v2-protobuf.js';
import { widgetCrd } from '../support/crd-fixtures.js';
import { runKubectl, startKubectlServer, TestToken, startTestServer, type KubectlServer, type TestServer } from '../support/helpers.js';

const ProtobufType = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

describe('/openapi/v2 document', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: widgetCrd })).status).toBe(201);
    // The CRD is served once Established; the document follows the served definitions.
    for (let i = 0; i < 100 && (await s.request('GET', '/apis/example.com/v1/widgets')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(() => s?.close());

  it('holds every built-in kind and the CRDs, with real properties and group-version-kinds', async () => {
    const r = await s.request('GET', '/openapi/v2');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    const doc = r.json;
    expect(doc.swagger).toBe('2.0');
    const pod = doc.definitions['io.k8s.api.core.v1.Pod'];
    expect(pod['x-kubernetes-group-version-kind']).toEqual([{ group: '', kind: 'Pod', version: 'v1' }]);
    expect(pod.properties.spec).toMatchObject({ $ref: '#/definitions/io.k8s.api.core.v1.PodSpec' });
    const podSpec = doc.definitions['io.k8s.api.core.v1.PodSpec'].properties;
    expect(podSpec.containers).toMatchObject({ type: 'array', items: { $ref: '#/definitions/io.k8s.api.core.v1.Container' }, 'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge' });
    expect(podSpec.tolerations['x-kubernetes-patch-strategy']).toBeUndefined();
    // A field Kubernetes 1.32 documents that the messages here lack is declared, untyped.
    expect(podSpec.os).toEqual({ description: expect.any(String) });
    expect(doc.definitions['io.k8s.api.core.v1.ServiceSpec'].properties.ports['x-kubernetes-patch-merge-key']).toBe('port');
    expect(doc.definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString']).toMatchObject({ type: 'string', format: 'int-or-string' });
    // One message served at several versions: one definition, every version's kind on it.
    const deployment = doc.definitions['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind'];
    expect(deployment).toEqual(expect.arrayContaining([{ group: 'apps', kind: 'Deployment', version: 'v1' }, { group: 'apps', kind: 'Deployment', version: 'v1beta1' }, { group: 'extensions', kind: 'Deployment', version: 'v1beta1' }]));
    const hpa = Object.values(doc.definitions).find((d: any) => d['x-kubernetes-group-version-kind']?.some((g: any) => g.kind === 'HorizontalPodAutoscaler' && g.version === 'v2')) as any;
    expect(Object.keys(hpa.properties.spec ?? {})).toContain('$ref');
    // The CRD's schema as written, without what Swagger 2.0 lacks.
    const widget = Object.values(doc.definitions).find((d: any) => d['x-kubernetes-group-version-kind']?.[0]?.kind === 'Widget') as any;
    expect(widget.properties.spec.properties.color).toEqual({ type: 'string', enum: ['red', 'green', 'blue'] });
    expect(widget.properties.spec.properties.note).toEqual({ type: 'string' });
    expect(widget.properties.metadata).toMatchObject({ $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' });
    expect(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].get).toMatchObject({ 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': { group: '', kind: 'Pod', version: 'v1' } });
    expect(doc.paths['/apis/example.com/v1/namespaces/{namespace}/widgets'].get.responses['200']).toEqual({ description: 'OK', schema: { type: 'object' } });
    expect(JSON.stringify(doc)).not.toContain('#/components/');
  });

  it('answers the protobuf form client-go asks for, the same document', async () => {
    const res = await fetch(`${s.url}/openapi/v2`, { headers: { authorization: `Bearer ${TestToken}`, accept: ProtobufType } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const doc = decodeOpenApiV2(Buffer.from(await res.arrayBuffer())) as any;
    expect(doc.swagger).toBe('2.0');
    const pod = doc.definitions.additional_properties.find((d: any) => d.name === 'io.k8s.api.core.v1.Pod').value;
    expect(pod.vendor_extension).toEqual([{ name: 'x-kubernetes-group-version-kind', value: { yaml: '[{"group":"","kind":"Pod","version":"v1"}]' } }]);
    expect(pod.properties.additional_properties.map((p: any) => p.name)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(doc.paths.path.length).toBe(Object.keys((await s.request('GET', '/openapi/v2')).json.paths).length);
  });

  it('validates with an ETag: a matching If-None-Match is 304, another representation has its own', async () => {
    const first = await s.request('GET', '/openapi/v2');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9A-F]{128}"$/);
    expect(first.headers.get('vary')).toBe('Accept');
    expect((await s.request('GET', '/openapi/v2', { headers: { 'if-none-match': etag } })).status).toBe(304);
    const pb = await fetch(`${s.url}/openapi/v2`, { headers: { authorization: `Bearer ${TestToken}`, accept: ProtobufType, 'if-none-match': etag } });
    expect(pb.status).toBe(200);
    expect(pb.headers.get('etag')).not.toBe(etag);
    // A write to /openapi/v2 is refused; without credentials it is 401.
    expect((await s.request('POST', '/openapi/v2', { body: {} })).status).toBe(404);
    expect((await s.request('GET', '/openapi/v2', { token: null })).status).toBe(401);
  });
});

describe('kubectl with /openapi/v2', () => {
  let k: KubectlServer;
  const kubectl = (...args: string[]) => runKubectl('kubectl', k.env, args);
  const manifest = (name: string, value: unknown) => {
    const file = join(k.dir, name);
    writeFileSync(file, stringify(value));
    return file;
  };
  const pod = (spec: Record<string, unknown>, name = 'web') => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec });
  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  it('refuses an unknown field before sending it (--validate=strict), accepts the fields Kubernetes 1.32 has', async () => {
    const bad = await kubectl('apply', '-f', manifest('bad.yaml', pod({ bogus: 1, containers: [{ name: 'web', image: 'nginx:1.27' }] })));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/unknown field "spec\.bogus"|unknown field "bogus"/);
    const good = await kubectl('apply', '-f', manifest('good.yaml', pod({ os: { name: 'linux' }, containers: [{ name: 'web', image: 'nginx:1.27', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }], ports: [{ containerPort: 80 }] }] })));
    expect(good.code, good.stderr).toBe(0);
    expect((await kubectl('apply', '--validate=false', '-f', manifest('bad2.yaml', pod({ bogus: 1, containers: [{ name: 'web', image: 'nginx:1.27' }] }, 'unchecked')))).code).toBe(0);
  });

  it("a wrong type is refused with kubectl's message", async () => {
    const r = await kubectl('apply', '-f', manifest('type.yaml', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'typed', namespace: 'default' }, spec: { replicas: 'three', selector: { matchLabels: { app: 'x' } }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'x', image: 'nginx' }] } } } }));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.replicas|replicas/);
  });

  it("apply merges a container's env by name from the document's patch keys", async () => {
    const spec = (env: object[]) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', env }] } } } });
    expect((await kubectl('apply', '-f', manifest('d1.yaml', spec([{ name: 'A', value: '1' }])))).code).toBe(0);
    // A variable set by someone else stays through the next apply, as on Kubernetes.
    expect((await kubectl('set', 'env', 'deployment/web', 'B=2')).code).toBe(0);
    const r = await kubectl('apply', '-f', manifest('d2.yaml', spec([{ name: 'A', value: '3' }])), '-v=8');
    expect(r.code, r.stderr.slice(-1500)).toBe(0);
    expect(r.stderr).toContain('application/strategic-merge-patch+json');
    const env = JSON.parse((await kubectl('get', 'deployment', 'web', '-o', 'jsonpath={.spec.template.spec.containers[0].env}')).stdout);
    expect(env).toEqual([{ name: 'A', value: '3' }, { name: 'B', value: '2' }]);
  });
});
