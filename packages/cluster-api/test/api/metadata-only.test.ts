/**
 * Metadata-only clients: requests shaped exactly as client-go's metadata client (k8s.io/client-go/metadata,
 * under its informers and controller-runtime's metadata watches) sends them — protobuf first, then
 * JSON, then plain JSON — answered as kube-apiserver's asPartialObjectMetadata(List) does, and read
 * back with this package's own protobuf codec (built on Kubernetes' .proto files only). No kubectl
 * release (1.27–1.33) asks for this representation; the Python client's test_metadata.py reads the
 * JSON form into its V1PartialObjectMetadata(List) models.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf, decodeWatchFrames, ProtobufMediaType, ProtobufWatchMediaType } from '../../src/protobuf/codec.js';
import type { ResourceDefinition } from '../../src/registry/definition.js';
import { createRegistry } from '../../src/registry/index.js';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { pod, request, TestToken, type Reply } from '../support/helpers.js';

/** The Accept headers of client-go's metadata client (metadata.go: Get and Watch; List). */
const clientGo = {
  one: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
  list: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
};
const json = {
  one: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
};

const gadget: ResourceDefinition = {
  group: 'example.com', version: 'v1', kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget',
  namespaced: true, schemaless: true, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], strategy: {},
};
const PODS = '/api/v1/namespaces/meta/pods';
const GADGETS = '/apis/example.com/v1/namespaces/meta/gadgets';

let server: ClusterApiServer;
const call = (method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Reply> =>
  request(server.url, method, path, { ...init, token: TestToken });
const raw = async (path: string, accept: string) => {
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${TestToken}`, accept, 'user-agent': 'metadata-test/v0.0.0 (linux/amd64) kubernetes/none' } });
  return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
};

beforeAll(async () => {
  const storage = new MemoryStorage();
  const registry = createRegistry(storage);
  server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), controllers: false });
  registry.add(gadget);
  expect((await call('POST', '/api/v1/namespaces', { body: { metadata: { name: 'meta' } } })).status).toBe(201);
  for (const name of ['a', 'b']) expect((await call('POST', PODS, { body: pod(name, { app: name }) })).status).toBe(201);
  expect((await call('POST', GADGETS, { body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', labels: { x: 'y' } }, spec: { secret: 's' } } })).status).toBe(201);
});
afterAll(() => server.close());

describe("client-go's metadata client, in protobuf", () => {
  it('Get: a PartialObjectMetadata envelope with the whole ObjectMeta and nothing else', async () => {
    const full = (await call('GET', `${PODS}/a`)).json;
    const r = await raw(`${PODS}/a`, clientGo.one);
    expect([r.status, r.type]).toEqual([200, ProtobufMediaType]);
    expect(decodeProtobuf(r.bytes)).toEqual({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: full.metadata });
  });

  it('List with limit and continue: a PartialObjectMetadataList', async () => {
    const first = await raw(`${PODS}?limit=1`, clientGo.list);
    expect([first.status, first.type]).toEqual([200, ProtobufMediaType]);
    const page = decodeProtobuf(first.bytes) as any;
    expect(page).toMatchObject({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: { resourceVersion: expect.any(String), continue: expect.any(String), remainingItemCount: 1 } });
    expect(page.items.map((i: any) => [i.metadata.name, Object.keys(i).sort()])).toEqual([['a', ['metadata']]]);
    const rest = decodeProtobuf((await raw(`${PODS}?limit=1&continue=${encodeURIComponent(page.metadata.continue)}`, clientGo.list)).bytes) as any;
    expect(rest.items.map((i: any) => i.metadata.name)).toEqual(['b']);
  });

  it('a kind with no protobuf message of its own (a custom resource) still answers its metadata in protobuf', async () => {
    const r = await raw(`${GADGETS}/g`, clientGo.one);
    expect([r.status, r.type]).toEqual([200, ProtobufMediaType]);
    expect(decodeProtobuf(r.bytes)).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'g', labels: { x: 'y' } } });
    expect(r.bytes.includes(Buffer.from('secret'))).toBe(false);
  });

  it('Watch (allowWatchBookmarks, resourceVersion, timeoutSeconds, watch=true): PartialObjectMetadata events in protobuf frames', async () => {
    const rv = (await call('GET', PODS)).json.metadata.resourceVersion;
    const controller = new AbortController();
    const res = await fetch(`${server.url}${PODS}?allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=30&watch=true`, {
      headers: { authorization: `Bearer ${TestToken}`, accept: clientGo.one },
      signal: controller.signal,
    });
    expect([res.status, res.headers.get('content-type')]).toEqual([200, ProtobufWatchMediaType]);
    expect((await call('PATCH', `${PODS}/a`, { body: { metadata: { labels: { seen: 'yes' } } }, headers: { 'content-type': 'application/merge-patch+json' } })).status).toBe(200);
    expect((await call('DELETE', `${PODS}/b`)).status).toBe(200);
    const reader = res.body!.getReader();
    let buffered: Buffer = Buffer.alloc(0);
    const events: any[] = [];
    while (events.length < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      const { events: got, rest } = decodeWatchFrames(Buffer.concat([buffered, Buffer.from(value)]));
      events.push(...got.filter((e) => e.type !== 'BOOKMARK'));
      buffered = rest;
    }
    controller.abort();
    expect(events.map((e) => [e.type, e.object.kind, e.object.apiVersion, e.object.metadata.name, 'spec' in e.object])).toEqual([
      ['MODIFIED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'a', false],
      ['DELETED', 'PartialObjectMetadata', 'meta.k8s.io/v1', 'b', false],
    ]);
    expect(events[0].object.metadata.labels).toEqual({ app: 'a', seen: 'yes' });
  });
});

describe('the JSON form, byte for byte', () => {
  it('Get and List as kube-apiserver encodes them: kind, apiVersion, metadata, items; a newline after', async () => {
    const full = (await call('GET', `${PODS}/a`)).json;
    const one = await call('GET', `${PODS}/a`, { headers: { accept: json.one } });
    expect(one.text).toMatch(/^\{"kind":"PartialObjectMetadata","apiVersion":"meta\.k8s\.io\/v1","metadata":\{[^\n]*\}\}\n$/);
    expect(one.json.metadata).toEqual(full.metadata);
    const list = await call('GET', PODS, { headers: { accept: json.list } });
    const rv = list.json.metadata.resourceVersion;
    expect(list.text).toMatch(new RegExp(`^\\{"kind":"PartialObjectMetadataList","apiVersion":"meta\\.k8s\\.io/v1","metadata":\\{"resourceVersion":"${rv}"\\},"items":\\[\\{"kind":"PartialObjectMetadata","apiVersion":"meta\\.k8s\\.io/v1","metadata":\\{[^\\n]*\\}\\]\\}\\n$`));
    expect(list.json.items.map((i: any) => i.metadata)).toEqual([full.metadata]);
  });

  it('an empty list has items null (Go nil slice), and v1beta1 is served in JSON', async () => {
    const empty = await call('GET', `${PODS}?labelSelector=app%3Dnone`, { headers: { accept: json.list } });
    expect(empty.json).toEqual({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: expect.any(String) }, items: null });
    const beta = await call('GET', GADGETS, { headers: { accept: 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1' } });
    expect([beta.headers.get('content-type'), beta.json.apiVersion, beta.json.items[0].apiVersion]).toEqual(['application/json', 'meta.k8s.io/v1beta1', 'meta.k8s.io/v1beta1']);
  });

  it('a metadata Patch answers the patched metadata; a Delete answers its Status unchanged', async () => {
    const patched = await call('PATCH', `${GADGETS}/g`, { body: { metadata: { annotations: { note: 'n' } } }, headers: { accept: json.one, 'content-type': 'application/merge-patch+json' } });
    expect(patched.json).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'g', annotations: { note: 'n' } } });
    expect(patched.json).not.toHaveProperty('spec');
    const deleted = await call('DELETE', `${GADGETS}/g`, { headers: { accept: json.one } });
    expect(deleted.json).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'g' } });
  });

  it('the list form of one object, or the single form of a list, is 406 with kube-apiserver\'s message', async () => {
    const single = await call('GET', `${PODS}/a`, { headers: { accept: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' } });
    expect([single.status, single.json.reason, single.json.message]).toEqual([406, 'NotAcceptable', 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.Pod)']);
    const list = await call('GET', PODS, { headers: { accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
    expect([list.status, list.json.message]).toEqual([406, 'you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)']);
  });
});
