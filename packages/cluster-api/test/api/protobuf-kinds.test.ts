/**
 * Every built-in kind the server serves, walked from discovery, is created from a protobuf body and read
 * back in protobuf (and a JSON-created one too), as Go clients and kubectl 1.32 send them. The kinds
 * that stay JSON are named here, each with its reason, so a new kind without messages fails this test.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { KubeObject } from '../../src/api/meta.js';
import { createCsr } from '../../src/certificates/x509.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf, encodeProtobuf, ProtobufMediaType } from '../../src/protobuf/codec.js';
import { fixtures } from '../../src/protobuf/testing/fixtures.js';
import { startTestServer, TestToken, type TestServer } from '../support/helpers.js';

type Json = Record<string, any>;

interface Served {
  path: string;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

/** Served without a protobuf form, as schemaless kinds and custom resources are in Kubernetes. */
const jsonOnly = new Set([
  // JSONSchemaProps (its JSON-valued default, enum, example) has no messages here.
  'apiextensions.k8s.io/v1 CustomResourceDefinition',
  'apiextensions.k8s.io/v1beta1 CustomResourceDefinition',
  // Shaped otherwise than networking.k8s.io/v1's; extensions/v1beta1 finds only its workloads in apps/v1.
  'extensions/v1beta1 Ingress',
  'extensions/v1beta1 NetworkPolicy',
  'extensions/v1beta1 PodSecurityPolicy',
  // Beta versions kept schemaless (removed from Kubernetes in 1.22).
  'authentication.k8s.io/v1beta1 SelfSubjectReview',
  'authentication.k8s.io/v1beta1 TokenReview',
  'authorization.k8s.io/v1beta1 LocalSubjectAccessReview',
  'authorization.k8s.io/v1beta1 SelfSubjectAccessReview',
  'authorization.k8s.io/v1beta1 SelfSubjectRulesReview',
  'authorization.k8s.io/v1beta1 SubjectAccessReview',
  'certificates.k8s.io/v1beta1 CertificateSigningRequest',
  // The resource metrics API's computed kinds (k8s.io/metrics has no messages here; kubectl top and client-node read JSON).
  'metrics.k8s.io/v1beta1 NodeMetrics',
  'metrics.k8s.io/v1beta1 PodMetrics',
]);

/** OpenShift's groups are served schemaless, as OpenShift 3's REST API without its protobuf. */
const isOpenShift = (apiVersion: string) => apiVersion.includes('.openshift.io/');

const protobufGet = (s: TestServer, path: string) =>
  fetch(s.url + path, { headers: { authorization: `Bearer ${TestToken}`, accept: `${ProtobufMediaType}, application/json` } });

async function served(s: TestServer): Promise<Served[]> {
  const groups = (await s.request('GET', '/apis')).json.groups as Json[];
  const versions = ['v1', ...groups.flatMap((g) => g.versions.map((v: Json) => v.groupVersion as string))];
  const out: Served[] = [];
  for (const gv of versions) {
    const base = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
    for (const r of (await s.request('GET', base)).json.resources as Json[]) {
      if (r.name.includes('/')) continue;
      out.push({ path: `${base}${r.namespaced ? '/namespaces/shop' : ''}/${r.name}`, apiVersion: gv, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs });
    }
  }
  return out;
}

/** A valid object of `kind`: the first fixture of that kind (any version), renamed, in namespace shop. */
function sample(r: Served, name: string): Json | undefined {
  const base = (fixtures[r.kind] ?? []).find((f) => f.apiVersion === r.apiVersion) ?? fixtures[r.kind]?.[0];
  if (!base) return undefined;
  const metadata = { name, ...(r.namespaced ? { namespace: 'shop' } : {}) };
  const obj: Json = { ...structuredClone(base), apiVersion: r.apiVersion, kind: r.kind, metadata };
  // Events expire an hour after they last happened (event-ttl): the fixtures' times are past that.
  if (r.kind === 'Event') for (const field of ['firstTimestamp', 'lastTimestamp', 'eventTime']) if (obj[field]) obj[field] = new Date().toISOString();
  if (obj.series) obj.series.lastObservedTime = new Date().toISOString();
  // An APIService is named `<version>.<group>` and may not skip TLS verification with a CA bundle (kube-aggregator's rules).
  if (r.kind === 'APIService') {
    obj.spec = { ...obj.spec, group: `${name}.example.com`, version: 'v1' };
    delete obj.spec.insecureSkipTLSVerify;
    obj.metadata.name = `v1.${name}.example.com`;
  }
  // A CSR carries a real PKCS#10 request (validation parses it).
  if (r.kind === 'CertificateSigningRequest') {
    obj.spec = { ...obj.spec, request: Buffer.from(createCsr(csrKey, { commonName: 'system:node:pb', organizations: ['system:nodes'] })).toString('base64') };
    delete obj.status;
  }
  return obj;
}

const csrKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;

describe('protobuf for every served built-in kind', () => {
  let s: TestServer;
  let all: Served[];
  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } } })).status).toBe(201);
    all = await served(s);
  });
  afterAll(() => s?.close());

  it('every kind but the JSON-only ones answers a protobuf list', async () => {
    const refused: string[] = [];
    for (const r of all.filter((r) => r.verbs.includes('list'))) {
      const res = await protobufGet(s, r.path);
      expect(res.status, `${r.apiVersion} ${r.kind}`).toBe(200);
      const type = res.headers.get('content-type') ?? '';
      const body = Buffer.from(await res.arrayBuffer());
      if (!type.startsWith(ProtobufMediaType)) refused.push(`${r.apiVersion} ${r.kind}`);
      else expect(decodeProtobuf(body).kind, r.path).toBe(`${r.kind}List`);
    }
    const unexpected = refused.filter((k) => !jsonOnly.has(k) && !isOpenShift(k.split(' ')[0]!));
    expect(unexpected).toEqual([]);
  });

  it('every creatable kind with a protobuf form is created from a protobuf body and read back in protobuf', async () => {
    const missing: string[] = [];
    let checked = 0;
    for (const r of all.filter((r) => r.verbs.includes('create'))) {
      const key = `${r.apiVersion} ${r.kind}`;
      if (jsonOnly.has(key) || isOpenShift(r.apiVersion)) continue;
      const name = `pb-${r.kind}-${r.apiVersion}`.toLowerCase().replace(/[^a-z0-9]+/g, '-');
      const obj = sample(r, name);
      if (!obj) {
        missing.push(key);
        continue;
      }
      const res = await fetch(s.url + r.path, {
        method: 'POST',
        headers: { authorization: `Bearer ${TestToken}`, 'content-type': ProtobufMediaType, accept: ProtobufMediaType },
        body: encodeProtobuf(obj),
      });
      const body = Buffer.from(await res.arrayBuffer());
      expect(res.headers.get('content-type'), `${key}: ${body.toString('latin1').slice(0, 300)}`).toBe(ProtobufMediaType);
      expect([200, 201], `${key}: ${JSON.stringify(decodeProtobuf(body)).slice(0, 400)}`).toContain(res.status);
      const created = decodeProtobuf(body) as KubeObject;
      expect(created.kind).toBe(r.kind);
      checked++;
      if (!r.verbs.includes('get')) continue;
      const got = await protobufGet(s, `${r.path}/${obj.metadata.name}`);
      expect(got.status, `${key}: ${JSON.stringify(created).slice(0, 400)}`).toBe(200);
      const read = decodeProtobuf(Buffer.from(await got.arrayBuffer())) as KubeObject;
      expect(read.metadata.name).toBe(obj.metadata.name);
      expect(read.metadata.uid).toBe(created.metadata.uid);
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(40);
  });

  it('a truncated protobuf body is a 400 Status, not an error', async () => {
    const hpa = all.find((r) => r.apiVersion === 'autoscaling/v2' && r.kind === 'HorizontalPodAutoscaler')!;
    const bytes = encodeProtobuf(sample(hpa, 'broken')!);
    const res = await fetch(s.url + hpa.path, {
      method: 'POST',
      headers: { authorization: `Bearer ${TestToken}`, 'content-type': ProtobufMediaType },
      body: bytes.subarray(0, bytes.length - 7),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ kind: 'Status', reason: 'BadRequest' });
  });
});
