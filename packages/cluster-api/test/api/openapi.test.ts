/**
 * /openapi/v3 over a real server, and `kubectl explain` (which reads it) with every kubectl here that
 * explains from OpenAPI v3 (1.27 and later).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKubectl, startKubectlServer, startTestServer, type KubectlServer, type TestServer } from '../support/helpers.js';

describe('OpenAPI v3 documents', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
  });
  afterAll(() => s.close());

  const document = async (path: string) => {
    const index = (await s.request('GET', '/openapi/v3')).json;
    return (await s.request('GET', index.paths[path].serverRelativeURL)).json;
  };

  it('lists one document per served group version, each URL carrying its content hash', async () => {
    const index = await s.request('GET', '/openapi/v3');
    expect(index.status).toBe(200);
    expect(Object.keys(index.json.paths)).toEqual(expect.arrayContaining(['api/v1', 'apis/batch/v1', 'apis/apps/v1beta1', 'apis/route.openshift.io/v1']));
    expect(index.json.paths['api/v1'].serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  });

  it('describes every kind of api/v1 from its message, marked with its group, version and kind', async () => {
    const doc = await document('api/v1');
    expect(doc.openapi).toBe('3.0.0');
    const kinds = Object.values(doc.components.schemas).flatMap((x: any) => x['x-kubernetes-group-version-kind'] ?? []).map((g: any) => g.kind);
    expect(kinds).toEqual(expect.arrayContaining(['Pod', 'Service', 'Namespace', 'Secret', 'ComponentStatus', 'PersistentVolumeClaim']));
    const podSchema = doc.components.schemas['io.k8s.api.core.v1.Pod'];
    expect(Object.keys(podSchema.properties)).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(podSchema.properties.spec).toEqual({ allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.PodSpec' }], description: expect.any(String) });
    const spec = doc.components.schemas['io.k8s.api.core.v1.PodSpec'].properties;
    expect(spec.containers).toEqual({ type: 'array', items: { $ref: '#/components/schemas/io.k8s.api.core.v1.Container' }, description: expect.stringMatching(/^List of containers belonging to the pod/) });
    expect(spec.nodeSelector).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    expect(spec.terminationGracePeriodSeconds).toMatchObject({ type: 'integer', format: 'int64' });
    // JSON's shapes, not the wire's: embedded structs flattened, special types as their JSON.
    const volume = doc.components.schemas['io.k8s.api.core.v1.Volume'].properties;
    expect(volume).toHaveProperty('emptyDir');
    expect(volume).not.toHaveProperty('volumeSource');
    expect(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Time']).toMatchObject({ type: 'string', format: 'date-time' });
    expect(doc.components.schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString']).toEqual({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
    // How kubectl finds a resource's kind: the GET of its paths.
    expect(doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].get['x-kubernetes-group-version-kind']).toEqual({ group: '', kind: 'Pod', version: 'v1' });
    expect(doc.paths['/api/v1/namespaces/{name}'].get['x-kubernetes-group-version-kind']).toMatchObject({ kind: 'Namespace' });
    // No PATCH anywhere: kubectl keeps its built-in strategic merge for apply.
    expect(Object.values(doc.paths).some((p: any) => p.patch || p.post)).toBe(false);
  });

  it("carries Kubernetes' descriptions and required fields, inlined structs' fields included", async () => {
    const { schemas } = (await document('api/v1')).components;
    const pod = schemas['io.k8s.api.core.v1.Pod'];
    expect(pod.description).toMatch(/^Pod is a collection of containers that can run on a host/);
    expect(pod.properties.kind.description).toMatch(/^Kind is a string value representing the REST resource/);
    // The status subresource's rule follows Kubernetes' own words.
    expect(pod.properties.status.description).toMatch(/^Most recently observed status of the pod\..*Written through the status subresource/);
    const container = schemas['io.k8s.api.core.v1.Container'];
    expect(container.required).toEqual(['name']);
    expect(container.properties.image.description).toMatch(/^Container image name/);
    // Volume's sources are VolumeSource's fields on the wire, documented as Volume's own.
    expect(schemas['io.k8s.api.core.v1.Volume'].properties.emptyDir.description).toMatch(/^emptyDir represents a temporary directory/);
    expect(schemas['io.k8s.api.core.v1.Volume'].required).toEqual(['name']);
    expect(schemas['io.k8s.api.core.v1.ServicePort'].required).toEqual(['port']);
    // Every required field is one the schema has.
    for (const schema of Object.values(schemas) as any[]) for (const field of schema.required ?? []) expect(schema.properties).toHaveProperty(field);
  });

  it('describes a kind stored as given as an open object with metadata', async () => {
    const doc = await document('apis/route.openshift.io/v1');
    const route = Object.values(doc.components.schemas).find((x: any) => x['x-kubernetes-group-version-kind']?.[0]?.kind === 'Route') as any;
    expect(route['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(route.properties.metadata.allOf[0].$ref).toBe('#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  });

  it('lets a document asked for by its hash be cached for good and answers 304 to a matching ETag', async () => {
    const url = (await s.request('GET', '/openapi/v3')).json.paths['api/v1'].serverRelativeURL;
    const first = await s.request('GET', url);
    expect(first.headers.get('cache-control')).toBe('public, immutable');
    const etag = first.headers.get('etag')!;
    expect(etag).toBe(`"${url.split('hash=')[1]}"`);
    expect((await s.request('GET', '/openapi/v3/api/v1')).headers.get('cache-control')).toBe('no-cache, private');
    const again = await s.request('GET', '/openapi/v3/api/v1', { headers: { 'if-none-match': etag } });
    expect([again.status, again.text]).toEqual([304, '']);
  });

  it('answers 404 Status for a group version it does not serve, and needs the token', async () => {
    const missing = await s.request('GET', '/openapi/v3/apis/nosuch.example.com/v1');
    expect(missing.json).toMatchObject({ kind: 'Status', code: 404, reason: 'NotFound' });
    for (const path of ['/openapi/v3/api', '/openapi/v3/api/v1/pods', '/openapi/v3x']) expect((await s.request('GET', path)).status).toBe(404);
    expect((await s.request('GET', '/openapi/v3', { token: null })).status).toBe(401);
  });
});

/** kubectl binaries here that explain from OpenAPI v3: the default one and the versioned ones beside it. */
function explainingKubectls(): string[] {
  const sdkBin = '/usr/lib/google-cloud-sdk/bin';
  const candidates = [
    ...(existsSync('/usr/bin/kubectl') ? ['/usr/bin/kubectl'] : []),
    ...(existsSync(sdkBin) ? readdirSync(sdkBin).filter((f) => /^kubectl\.1\.\d+$/.test(f)).map((f) => join(sdkBin, f)) : []),
  ];
  return candidates.filter((bin) => {
    try {
      const info = JSON.parse(execFileSync(bin, ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 10_000 }));
      return Number(info.clientVersion.major) === 1 && Number.parseInt(info.clientVersion.minor, 10) >= 27;
    } catch {
      return false;
    }
  });
}

const kubectls = explainingKubectls();

describe.runIf(kubectls.length > 0)('kubectl explain', () => {
  let k: KubectlServer;
  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  it.each(kubectls)('%s explains a kind, a nested field and a kind stored as given', async (bin) => {
    const pods = await runKubectl(bin, k.env, ['explain', 'pods']);
    expect(pods.code, pods.stderr).toBe(0);
    expect(pods.stdout).toMatch(/KIND:\s+Pod/);
    expect(pods.stdout).toMatch(/spec\s+<PodSpec>/);
    expect(pods.stdout).toMatch(/Pod is a collection of containers that can run on a host/);
    const containers = await runKubectl(bin, k.env, ['explain', 'pods.spec.containers']);
    expect(containers.stdout).toMatch(/List of containers belonging to the pod/);
    expect(containers.stdout).toMatch(/name\s+<string> -required-/);
    const ports = await runKubectl(bin, k.env, ['explain', 'pods.spec.containers.ports']);
    expect(ports.stdout).toMatch(/FIELD: ports <\[\]ContainerPort>/);
    expect(ports.stdout).toMatch(/containerPort\s+<integer>/);
    expect((await runKubectl(bin, k.env, ['explain', 'services.spec.ports'])).stdout).toMatch(/targetPort\s+<IntOrString>/);
    const deployments = await runKubectl(bin, k.env, ['explain', 'deployments.apps']);
    expect(deployments.stdout).toMatch(/KIND:\s+Deployment/);
    const missing = await runKubectl(bin, k.env, ['explain', 'pods.spec.nosuchfield']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/nosuchfield/);
  });
});
