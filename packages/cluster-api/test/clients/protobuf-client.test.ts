/**
 * A protobuf-reading client over real HTTP, as client-go is one: it asks for
 * `application/vnd.kubernetes.protobuf`, reads the `k8s\0` envelope and the length-prefixed watch
 * frames, and decodes with the package's shipped .proto files loaded here on their own (protobufjs),
 * not through the server's codec.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProtobuf } from '../../src/protobuf/codec.js';
import { randomBytes, rng } from '../../src/protobuf/testing/fuzz.js';
import { namespace, pod, startTestServer, TestToken, type TestServer } from '../support/helpers.js';

const Protobuf = 'application/vnd.kubernetes.protobuf';
const protoDir = fileURLToPath(new URL('../../src/protobuf/proto/', import.meta.url));

/** The client's own schema: the shipped files, nothing else from the package. */
function clientSchema(): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(protoDir, target);
  root.loadSync(['k8s.io/api/core/v1/generated.proto', 'k8s.io/apimachinery/pkg/runtime/generated.proto'], { keepCase: true });
  root.resolveAll();
  return root;
}

const root = clientSchema();
const type = (name: string) => root.lookupType(name);
const Unknown = type('k8s.io.apimachinery.pkg.runtime.Unknown');
const asObject = { longs: Number, defaults: false } as const;

type Obj = Record<string, any>;

/** Envelope → {apiVersion, kind, message as a protobufjs plain object}. */
function unwrap(bytes: Uint8Array): { apiVersion: string; kind: string; message: Obj } {
  expect(Buffer.from(bytes.subarray(0, 4)).toString('latin1')).toBe('k8s\0');
  const unknown = Unknown.toObject(Unknown.decode(bytes.subarray(4)), asObject) as Obj;
  const { apiVersion, kind } = unknown.typeMeta;
  const pkg = kind === 'Status' || kind === 'DeleteOptions' ? 'k8s.io.apimachinery.pkg.apis.meta.v1' : 'k8s.io.api.core.v1';
  const message = type(`${pkg}.${kind}`);
  return { apiVersion, kind, message: message.toObject(message.decode(unknown.raw), asObject) as Obj };
}

function wrap(apiVersion: string, kind: string, name: string, value: Obj): Buffer {
  const message = type(name);
  const raw = message.encode(message.fromObject(value)).finish();
  const envelope = Unknown.encode(Unknown.fromObject({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' })).finish();
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), envelope]);
}

describe('a protobuf client over HTTP', () => {
  let s: TestServer;
  const call = async (method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) => {
    const res = await fetch(s.url + path, { method, headers: { authorization: `Bearer ${TestToken}`, ...headers }, body });
    return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('pb') })).status).toBe(201);
    for (const name of ['a', 'b', 'c']) expect((await s.request('POST', '/api/v1/namespaces/pb/pods', { body: pod(name, { app: 'pb' }) })).status).toBe(201);
  });
  afterAll(() => s.close());

  it('lists Pods as a PodList envelope', async () => {
    const json = (await s.request('GET', '/api/v1/namespaces/pb/pods')).json;
    const r = await call('GET', '/api/v1/namespaces/pb/pods', { accept: Protobuf });
    expect([r.status, r.type]).toEqual([200, Protobuf]);
    const { apiVersion, kind, message } = unwrap(r.bytes);
    expect([apiVersion, kind]).toEqual(['v1', 'PodList']);
    expect(message.metadata.resourceVersion).toBe(json.metadata.resourceVersion);
    expect(message.items.map((p: Obj) => p.metadata.name)).toEqual(['a', 'b', 'c']);
    const [first] = message.items;
    expect(first.metadata.uid).toBe(json.items[0].metadata.uid);
    expect(first.metadata.labels).toEqual({ app: 'pb' });
    expect(first.metadata.creationTimestamp.seconds).toBe(Date.parse(json.items[0].metadata.creationTimestamp) / 1000);
    expect(first.spec.containers).toEqual([expect.objectContaining({ name: 'app', image: 'nginx:1.25' })]);
    expect(first.status.phase).toBe('Pending');
  });

  it.each([
    ['client-go default', `${Protobuf}, application/json`, Protobuf],
    ['JSON listed first', `application/json, ${Protobuf}`, 'application/json'],
    ['protobuf with a lower q', `${Protobuf};q=0.5, application/json`, 'application/json'],
    ['JSON with a lower q', `application/json;q=0.9, ${Protobuf}`, Protobuf],
    ['protobuf only', Protobuf, Protobuf],
    ['anything', '*/*', 'application/json'],
  ])('negotiates %s', async (_what, accept, want) => {
    const r = await call('GET', '/api/v1/namespaces/pb/pods/a', { accept });
    expect([r.status, r.type]).toEqual([200, want]);
    if (want === Protobuf) expect(unwrap(r.bytes).message.metadata.name).toBe('a');
  });

  it('keeps discovery and schemaless kinds in JSON; 406 when only protobuf is acceptable', async () => {
    expect((await call('GET', '/api/v1', { accept: `${Protobuf}, application/json` })).type).toBe('application/json');
    // extensions/v1beta1 Ingress has no messages (its shape is not networking.k8s.io/v1's).
    const ingresses = '/apis/extensions/v1beta1/namespaces/pb/ingresses';
    expect((await call('GET', ingresses, { accept: `${Protobuf}, application/json` })).type).toBe('application/json');
    for (const path of ['/api/v1', ingresses]) {
      const r = await call('GET', path, { accept: Protobuf });
      expect([r.status, r.type]).toEqual([406, 'application/json']);
    }
  });

  it('answers errors as a protobuf Status when protobuf was asked', async () => {
    const r = await call('GET', '/api/v1/namespaces/pb/pods/missing', { accept: `${Protobuf}, application/json` });
    expect([r.status, r.type]).toEqual([404, Protobuf]);
    const { kind, message } = unwrap(r.bytes);
    expect(kind).toBe('Status');
    expect(message).toMatchObject({ status: 'Failure', reason: 'NotFound', code: 404, details: { name: 'missing', kind: 'pods' } });
  });

  it('creates, replaces and deletes with protobuf bodies', async () => {
    const headers = { 'content-type': Protobuf, accept: `${Protobuf}, application/json` };
    const body = wrap('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: { name: 'd', labels: { tier: 'web' } },
      spec: { containers: [{ name: 'app', image: 'nginx:1.25', ports: [{ containerPort: 80 }], resources: { limits: { cpu: { string: '500m' } } } }] },
    });
    const created = await call('POST', '/api/v1/namespaces/pb/pods', headers, body);
    expect([created.status, created.type]).toEqual([201, Protobuf]);
    const pod = unwrap(created.bytes).message;
    expect(pod.metadata).toMatchObject({ name: 'd', namespace: 'pb', labels: { tier: 'web' } });
    expect(pod.spec.containers[0].resources.limits.cpu.string).toBe('500m');
    // A limit without a request requests the limit (the Pod defaults).
    expect((await s.request('GET', '/api/v1/namespaces/pb/pods/d')).json.spec.containers[0].resources).toEqual({ limits: { cpu: '500m' }, requests: { cpu: '500m' } });

    pod.metadata.labels.tier = 'api';
    const replaced = await call('PUT', '/api/v1/namespaces/pb/pods/d', headers, wrap('v1', 'Pod', 'k8s.io.api.core.v1.Pod', pod));
    expect(replaced.status).toBe(200);
    expect(unwrap(replaced.bytes).message.metadata.labels).toEqual({ tier: 'api' });
    const stale = await call('PUT', '/api/v1/namespaces/pb/pods/d', headers, wrap('v1', 'Pod', 'k8s.io.api.core.v1.Pod', pod));
    expect(stale.status).toBe(409);
    expect(unwrap(stale.bytes).message).toMatchObject({ reason: 'Conflict', code: 409 });

    const options = (uid: string) => wrap('v1', 'DeleteOptions', 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions', { gracePeriodSeconds: 0, preconditions: { uid } });
    const wrongUid = await call('DELETE', '/api/v1/namespaces/pb/pods/d', headers, options('not-the-uid'));
    expect(wrongUid.status).toBe(409);
    const deleted = await call('DELETE', '/api/v1/namespaces/pb/pods/d', headers, options(pod.metadata.uid));
    expect(deleted.status).toBe(200);
    expect((await s.request('GET', '/api/v1/namespaces/pb/pods/d')).status).toBe(404);
  });

  it('accepts bodies as Go writes them: every non-pointer field present, zero values included', async () => {
    const headers = { 'content-type': Protobuf, accept: `${Protobuf}, application/json` };
    const meta = (name: string) => ({ name, generateName: '', namespace: '', selfLink: '', uid: '', resourceVersion: '', generation: 0, creationTimestamp: {} });
    const svc = wrap('v1', 'Service', 'k8s.io.api.core.v1.Service', {
      metadata: meta('go-svc'),
      spec: { ports: [{ name: '', protocol: '', port: 80, targetPort: { type: 0, intVal: 0, strVal: '' }, nodePort: 0 }], selector: { app: 'go' }, clusterIP: '', type: '', sessionAffinity: '' },
      status: { loadBalancer: {} },
    });
    const created = await call('POST', '/api/v1/namespaces/pb/services', headers, svc);
    expect(created.status).toBe(201);
    const spec = unwrap(created.bytes).message.spec;
    expect(spec.ports[0]).toMatchObject({ port: 80, protocol: 'TCP', targetPort: { type: 0, intVal: 80 } });
    expect(spec.type).toBe('ClusterIP');
    expect(spec.clusterIP).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

    const goPod = wrap('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
      metadata: meta('go-pod'),
      spec: { containers: [{ name: 'c', image: 'nginx', workingDir: '', resources: {}, terminationMessagePath: '', imagePullPolicy: '', stdin: false, tty: false }], restartPolicy: '', dnsPolicy: '', nodeName: '', hostNetwork: false, schedulerName: '' },
      status: { phase: '', message: '', reason: '', hostIP: '', podIP: '', qosClass: '' },
    });
    const pod = await call('POST', '/api/v1/namespaces/pb/pods', headers, goPod);
    expect(pod.status).toBe(201);
    expect(unwrap(pod.bytes).message.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
    expect((await s.request('DELETE', '/api/v1/namespaces/pb/pods/go-pod?gracePeriodSeconds=0')).status).toBe(200);
  });

  it.each([
    ['application/vnd.kubernetes.protobuf;stream=watch'],
    [`${Protobuf}, application/json`],
  ])('watches Pods in length-prefixed protobuf frames (Accept %s)', async (accept) => {
    const rv = (await s.request('GET', '/api/v1/namespaces/pb/pods')).json.metadata.resourceVersion;
    const controller = new AbortController();
    const res = await fetch(`${s.url}/api/v1/namespaces/pb/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=20`, {
      headers: { authorization: `Bearer ${TestToken}`, accept },
      signal: controller.signal,
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, `${Protobuf};stream=watch`]);
    const frames = readFrames(res.body!);
    expect((await s.request('POST', '/api/v1/namespaces/pb/pods', { body: pod('w') })).status).toBe(201);
    expect((await s.request('PATCH', '/api/v1/namespaces/pb/pods/w', { body: { metadata: { labels: { seen: 'yes' } } }, headers: { 'content-type': 'application/merge-patch+json' } })).status).toBe(200);
    expect((await s.request('DELETE', '/api/v1/namespaces/pb/pods/w?gracePeriodSeconds=0')).status).toBe(200);
    const events = [await frames.next(), await frames.next(), await frames.next()];
    controller.abort();
    const WatchEvent = type('k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent');
    const decoded = events.map((frame) => WatchEvent.toObject(WatchEvent.decode(frame), asObject) as Obj);
    expect(decoded.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
    const objects = decoded.map((e) => unwrap(e.object.raw));
    expect(objects.map((o) => [o.kind, o.message.metadata.name])).toEqual([['Pod', 'w'], ['Pod', 'w'], ['Pod', 'w']]);
    expect(objects[1]!.message.metadata.labels).toEqual({ seen: 'yes' });
  });
});

describe('malformed protobuf bodies over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('memory');
    expect((await s.request('POST', '/api/v1/namespaces', { body: namespace('fz') })).status).toBe(201);
  });
  afterAll(() => s.close());

  const post = (body: Buffer) =>
    s.request('POST', '/api/v1/namespaces/fz/pods', { body, headers: { 'content-type': Protobuf } });

  /** Cuts after the raw field's tag and before its end: the field always overruns, so each must be refused. */
  function truncations(): Buffer[] {
    const valid = encodeProtobuf({ ...pod('cut'), metadata: { name: 'cut', labels: { a: 'b' } } });
    const rawTag = 4 + 2 + valid[5]!; // magic, typeMeta's tag and 1-byte length, typeMeta
    expect(valid[rawTag]).toBe(0x12);
    const rawEnd = valid.length - 4; // two empty fields follow raw: contentEncoding and contentType
    const cuts: Buffer[] = [];
    for (let cut = rawTag + 1; cut < rawEnd; cut += 3) cuts.push(valid.subarray(0, cut));
    return cuts;
  }

  it('answers every random or truncated body with a 400 or 415 Status and keeps serving', async () => {
    const bodies = [...truncations()];
    for (let seed = 1; seed <= 40; seed++) {
      const next = rng(seed);
      bodies.push(randomBytes(next, 200), Buffer.concat([Buffer.from('k8s\0', 'latin1'), randomBytes(next, 200)]));
    }
    const codes = new Set<number>();
    for (const body of bodies) {
      const r = await post(body);
      codes.add(r.status);
      expect(r.json, `${r.status} ${r.text.slice(0, 80)}`).toMatchObject({ kind: 'Status', status: 'Failure', code: r.status });
      expect([400, 415]).toContain(r.status);
    }
    expect(codes.has(400)).toBe(true);
    expect((await s.request('GET', '/healthz')).status).toBe(200);
    expect((await s.request('GET', '/api/v1/namespaces/fz/pods')).json.items).toEqual([]);
    expect((await post(encodeProtobuf(pod('ok')))).status).toBe(201);
  });
});

/** Reads 4-byte big-endian length-prefixed frames off a response body as they arrive. */
function readFrames(body: ReadableStream<Uint8Array>): { next(): Promise<Uint8Array> } {
  const reader = body.getReader();
  let buffered = Buffer.alloc(0);
  return {
    async next() {
      for (;;) {
        if (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
          const size = buffered.readUInt32BE(0);
          const frame = buffered.subarray(4, 4 + size);
          buffered = buffered.subarray(4 + size);
          return frame;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('watch ended before the expected frames');
        buffered = Buffer.concat([buffered, value]);
      }
    },
  };
}
