import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/errors.js';
import { allKinds } from '../registry/kinds/index.js';
import { decodeProtobuf, decodeWatchFrames, encodeProtobuf, encodeWatchFrame, supportsProtobuf } from './codec.js';
import { servesProtobuf } from './negotiation.js';
import { fixtures, listFixtures } from './testing/fixtures.js';
import { randomBytes, rng } from './testing/fuzz.js';

const rows = Object.entries(fixtures).flatMap(([kind, list]) => list.map((obj, i) => [`${kind} #${i}`, obj] as const));
const listRows = listFixtures.map((list) => [String(list.kind), list] as const);

/** The stored form a client reads back: JSON text parsed again, as the store hands it out. */
const internal = (obj: unknown): unknown => JSON.parse(JSON.stringify(obj));

describe('protobuf round trip: JSON → internal → protobuf → internal → JSON', () => {
  it.each(rows)('%s', (_name, obj) => {
    const bytes = encodeProtobuf(internal(obj));
    expect(bytes.subarray(0, 4).toString('latin1')).toBe('k8s\0');
    expect(JSON.stringify(internal(decodeProtobuf(bytes)))).toBe(JSON.stringify(reordered(obj, decodeProtobuf(bytes))));
    expect(decodeProtobuf(bytes)).toStrictEqual(internal(obj));
  });

  it.each(listRows)('%s', (_name, list) => {
    expect(decodeProtobuf(encodeProtobuf(internal(list)))).toStrictEqual(internal(list));
  });

  it('covers every kind of the spec that has a schema', () => {
    const kinds = ['Namespace', 'ServiceAccount', 'LimitRange', 'ResourceQuota', 'Secret', 'PersistentVolumeClaim', 'PersistentVolume', 'Service',
      'SecurityContextConstraints', 'PodTemplate', 'ReplicationController', 'Pod', 'ComponentStatus'];
    for (const kind of kinds) {
      expect(fixtures[kind]?.length, kind).toBeGreaterThan(0);
      expect(supportsProtobuf('v1', kind), kind).toBe(true);
      expect(supportsProtobuf('v1', `${kind}List`), `${kind}List`).toBe(true);
    }
    expect(supportsProtobuf('apps/v1', 'Deployment')).toBe(true);
    expect(supportsProtobuf('v1', 'ConfigMap')).toBe(true);
    expect(supportsProtobuf('apps.openshift.io/v1', 'DeploymentConfig')).toBe(false);
    expect(supportsProtobuf('v1', 'Time')).toBe(false);
    expect(supportsProtobuf('batch/v1', 'Job')).toBe(true);
  });
});

/** Key order aside, JSON equality: the decoded object follows the message's field order (Go's struct order). */
function reordered(expected: unknown, like: unknown): unknown {
  if (Array.isArray(expected)) return expected.map((v, i) => reordered(v, (like as unknown[])[i]));
  if (typeof expected !== 'object' || expected === null) return expected;
  const e = expected as Record<string, unknown>;
  const l = (like ?? {}) as Record<string, unknown>;
  const keys = [...Object.keys(l).filter((k) => k in e), ...Object.keys(e).filter((k) => !(k in l))];
  return Object.fromEntries(keys.map((k) => [k, reordered(e[k], l[k])]));
}

describe('special types', () => {
  const pod = (status: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, status });

  it.each([
    ['whole seconds', '2026-11-20T23:00:00Z', '2026-11-20T23:00:00Z'],
    ['a zone offset, normalised to UTC', '2026-11-21T01:00:00+02:00', '2026-11-20T23:00:00Z'],
    ['a fraction, kept to the nanosecond', '2026-11-20T23:00:00.123456789Z', '2026-11-20T23:00:00.123456789Z'],
    ['the epoch itself, which Go reads as the zero time (null)', '1970-01-01T00:00:00Z', undefined],
  ])('Time: %s', (_what, input, output) => {
    expect(decodeProtobuf(encodeProtobuf(pod({ startTime: input }))).status).toStrictEqual(output === undefined ? {} : { startTime: output });
  });

  it('refuses a Time that is not RFC 3339 with a 400', () => {
    expect(() => encodeProtobuf(pod({ startTime: 'yesterday' }))).toThrow(expect.objectContaining({ code: 400 }));
  });

  it('a zero IntOrString, which Go writes for an unset targetPort, decodes as unset', () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 0 }] } };
    expect(decodeProtobuf(encodeProtobuf(svc)).spec).toStrictEqual({ ports: [{ port: 80 }] });
  });

  it('Quantity numbers become their canonical strings; IntOrString keeps int vs string', () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 81, targetPort: '8080' }] } };
    expect(decodeProtobuf(encodeProtobuf(svc)).spec).toStrictEqual(svc.spec);
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q' }, spec: { hard: { pods: 10, cpu: 1.5 } } };
    expect(decodeProtobuf(encodeProtobuf(quota)).spec).toStrictEqual({ hard: { pods: '10', cpu: '1.5' } });
  });

  it('Secret data travels as raw bytes, not as base64 text', () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: Buffer.from('hello').toString('base64') } };
    const bytes = encodeProtobuf(secret);
    expect(bytes.includes(Buffer.from('hello'))).toBe(true);
    expect(bytes.includes(Buffer.from(secret.data.k))).toBe(false);
  });

  it('a map key of "__proto__" stays a plain key and never reaches a prototype', () => {
    const ns = JSON.parse('{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","annotations":{"__proto__":"x","a":"b"}}}');
    const decoded = decodeProtobuf(encodeProtobuf(ns)) as { metadata: { annotations: Record<string, string> } };
    expect(Object.getPrototypeOf(decoded.metadata.annotations)).toBe(Object.prototype);
    expect(Object.keys(decoded.metadata.annotations)).toContain('a');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("ObjectMeta's empty strings, which Go clients write (kubectl's generateName and selfLink), decode as absent", () => {
    const deploy = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', generateName: '', selfLink: '', namespace: 'default' }, spec: { selector: {} } };
    const decoded = decodeProtobuf(encodeProtobuf(deploy)) as { metadata: Record<string, unknown> };
    expect(decoded.metadata).toStrictEqual({ name: 'web', namespace: 'default' });
  });

  it('null and unknown JSON fields are left out, as Go drops them', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', creationTimestamp: null, bogus: 1 }, spec: null, extra: true };
    expect(decodeProtobuf(encodeProtobuf(ns))).toStrictEqual({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
  });

  it('a schemaless kind has no protobuf form: 406 to encode, 415 to decode', () => {
    expect(() => encodeProtobuf({ apiVersion: 'route.openshift.io/v1', kind: 'Route', metadata: { name: 'd' } })).toThrow(expect.objectContaining({ code: 406 }));
    const ns = encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } });
    const relabelled = Buffer.from(ns.toString('latin1').replace('\x0a\x02v1\x12\x09Namespace', '\x0a\x02v1\x12\x09Nonsenses'), 'latin1');
    expect(() => decodeProtobuf(relabelled)).toThrow(expect.objectContaining({ code: 415 }));
  });
});

describe('watch frames', () => {
  it('carries a BOOKMARK (an object of the kind with only a resourceVersion), as informers expect it', () => {
    const bookmark = { type: 'BOOKMARK' as const, object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '77' } } };
    expect(decodeWatchFrames(encodeWatchFrame(bookmark)).events).toStrictEqual([bookmark]);
  });

  it('length-prefixes each WatchEvent whose object is a full envelope', () => {
    const pod = fixtures.Pod![1]!;
    const status = fixtures.Status![1]!;
    const frames = Buffer.concat([encodeWatchFrame({ type: 'ADDED', object: pod }), encodeWatchFrame({ type: 'ERROR', object: status })]);
    expect(frames.readUInt32BE(0)).toBe(encodeWatchFrame({ type: 'ADDED', object: pod }).length - 4);
    const half = decodeWatchFrames(frames.subarray(0, frames.length - 3));
    expect(half.events.map((e) => e.type)).toEqual(['ADDED']);
    const { events, rest } = decodeWatchFrames(frames);
    expect(rest.length).toBe(0);
    expect(events).toStrictEqual([{ type: 'ADDED', object: internal(pod) }, { type: 'ERROR', object: internal(status) }]);
  });
});

/** Either a decoded object or a 400/415 ApiError: never another exception. */
function outcome(bytes: Buffer): 'ok' | 400 | 415 {
  try {
    decodeProtobuf(bytes);
    return 'ok';
  } catch (err) {
    if (!(err instanceof ApiError) || (err.code !== 400 && err.code !== 415)) throw new Error(`unexpected ${String(err)}`);
    return err.code as 400 | 415;
  }
}

describe('malformed protobuf → 400, never a crash', () => {
  const valid = encodeProtobuf(fixtures.Pod![1]!);
  const magic = Buffer.from('k8s\0', 'latin1');

  it('random bytes, with and without the magic, under 500 seeds', () => {
    const seen = new Set<string>();
    for (let seed = 1; seed <= 500; seed++) {
      const next = rng(seed);
      const body = randomBytes(next, 300);
      seen.add(String(outcome(body)));
      seen.add(String(outcome(Buffer.concat([magic, body]))));
    }
    expect(seen.has('400')).toBe(true);
  });

  it('every truncation of a rich Pod', () => {
    const results = new Map<string, number>();
    for (let cut = 0; cut < valid.length; cut++) {
      const r = String(outcome(valid.subarray(0, cut)));
      results.set(r, (results.get(r) ?? 0) + 1);
    }
    expect(results.get('400')).toBeGreaterThan(valid.length / 2);
  });

  it('bit flips of a rich Pod under 150 seeds', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const next = rng(seed);
      const body = Buffer.from(valid);
      for (let i = 0; i < 1 + Math.floor(next() * 8); i++) body[4 + Math.floor(next() * (body.length - 4))] ^= 1 << Math.floor(next() * 8);
      expect(['ok', 400, 415]).toContain(outcome(body));
    }
  });

  it.each([
    ['an empty body', Buffer.alloc(0)],
    ['JSON', Buffer.from('{"kind":"Pod"}')],
    ['the magic alone', magic],
    ['an endless varint', Buffer.concat([magic, Buffer.alloc(16, 0xff)])],
    ['a length past the end', Buffer.concat([magic, Buffer.from([0x12, 0xff, 0xff, 0xff, 0x0f])])],
    ['an end-group tag', Buffer.concat([magic, Buffer.from([0x0c])])],
    ['groups nested 100 000 deep', Buffer.concat([magic, envelopeOf('Pod', Buffer.alloc(200_000, Buffer.from([0x9b, 0x06])))])],
    ['a compressed envelope', Buffer.concat([magic, Buffer.from([0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x09, ...Buffer.from('Namespace'), 0x1a, 0x04, ...Buffer.from('gzip')])])],
  ])('%s', (_what, bytes) => {
    expect(outcome(bytes)).toBe(400);
  });
});

/** An envelope around raw bytes, written by hand so the raw part can be anything. */
function envelopeOf(kind: string, raw: Buffer): Buffer {
  const field = (n: number, body: Buffer): Buffer => Buffer.concat([Buffer.from([(n << 3) | 2]), varint(body.length), body]);
  return Buffer.concat([field(1, Buffer.concat([field(1, Buffer.from('v1')), field(2, Buffer.from(kind))])), field(2, raw)]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n = Math.floor(n / 128);
  } while (n > 0);
  return Buffer.from(out);
}

describe('servesProtobuf', () => {
  it('answers in protobuf only for typed kinds, never for schemaless ones (even when a message exists)', () => {
    // Each kind once: kinds served at several versions are one kind.
    const served = [...new Set(allKinds.filter(servesProtobuf).map((d) => d.kind))];
    expect(served.sort()).toEqual(['APIService', 'CertificateSigningRequest', 'ClusterRole', 'ClusterRoleBinding', 'ComponentStatus', 'ConfigMap', 'ControllerRevision', 'CronJob', 'DaemonSet', 'Deployment',
      'EndpointSlice', 'Endpoints', 'Event', 'HorizontalPodAutoscaler', 'Ingress', 'IngressClass', 'Job', 'Lease', 'LimitRange', 'LocalSubjectAccessReview', 'Namespace', 'NetworkPolicy', 'Node',
      'PersistentVolume', 'PersistentVolumeClaim', 'Pod', 'PodDisruptionBudget', 'PodTemplate', 'PriorityClass', 'ReplicaSet', 'ReplicationController', 'ResourceQuota',
      'Role', 'RoleBinding', 'Secret', 'SecurityContextConstraints', 'SelfSubjectAccessReview', 'SelfSubjectReview', 'SelfSubjectRulesReview', 'Service', 'ServiceAccount',
      'StatefulSet', 'StorageClass', 'SubjectAccessReview', 'TokenReview']);
    expect(allKinds.some((d) => d.kind === 'DeploymentConfig' && d.schemaless)).toBe(true);
  });
});
