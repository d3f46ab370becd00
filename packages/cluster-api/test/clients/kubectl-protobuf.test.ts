/**
 * kubectl against `serve()` with protobuf in play: recent kubectl sends `create namespace` and
 * `create secret` bodies as application/vnd.kubernetes.protobuf and accepts protobuf answers. Every
 * command runs at -v=6 so each HTTP exchange is visible: none may be refused with 406 or 415. Runs
 * the default kubectl and the oldest and newest installed beside it.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtobuf, encodeProtobuf } from '../../src/protobuf/codec.js';
import { kubectlStatuses as statusesIn, runKubectl, startKubectlServer, startTestServer, TestToken, type KubectlServer, type TestServer } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

const run = promisify(execFile);
const sdkBin = '/usr/lib/google-cloud-sdk/bin';

/** /usr/bin/kubectl, and the oldest (JSON bodies) and newest (protobuf bodies) versioned kubectl beside it. */
function kubectls(): string[] {
  const found = existsSync('/usr/bin/kubectl') ? ['/usr/bin/kubectl'] : [];
  const versioned = existsSync(sdkBin) ? readdirSync(sdkBin).filter((f) => /^kubectl\.1\.\d+$/.test(f)) : [];
  versioned.sort((a, b) => Number(a.split('.')[2]) - Number(b.split('.')[2]));
  for (const pick of new Set([versioned[0], versioned.at(-1)])) if (pick) found.push(join(sdkBin, pick));
  return found;
}

const manifest = (ns: string) => `apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${ns}, labels: {app: web}}
spec:
  containers: [{name: web, image: nginx:1.25}]
`;

/** The create request and its answer in a -v=8 log, in either log format. */
function createExchange(log: string): { request: string; response: string } {
  const at = log.search(/POST"? (?:url=")?https:\/\/\S*\/api\/v1\/namespaces\?/);
  const exchange = log.slice(at);
  const answer = exchange.search(/Response Status: |"Response" status=/);
  return { request: exchange.slice(0, answer), response: exchange.slice(answer, answer + 1500) };
}

describe.runIf(kubectls().length > 0)('kubectl with protobuf bodies and answers', () => {
  let k: KubectlServer;

  beforeAll(async () => {
    k = await startKubectlServer();
  });
  afterAll(() => k?.close());

  describe.each(kubectls().map((bin, i) => [bin, `kp${i}`] as const))('%s', (bin, ns) => {
    const kubectl = (...args: string[]) => runKubectl(bin, k.env, [...args, '-v=6']);
    /** Runs a command, checks it succeeded and that no exchange was refused for its media type. */
    const ok = async (...args: string[]) => {
      const r = await kubectl(...args);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const codes = statusesIn(r.stderr);
      expect(codes.length).toBeGreaterThan(0);
      expect(codes.filter((c) => c === 406 || c === 415)).toEqual([]);
      return r.stdout;
    };

    // kubectl up to 1.29 posts typed create bodies as JSON; 1.32 and later (all we have seen) as protobuf.
    it('create namespace: protobuf in and out where kubectl sends protobuf', async () => {
      const { stdout: version } = await run(bin, ['version', '--client', '-o', 'json'], { env: k.env });
      const minor = Number.parseInt(JSON.parse(version).clientVersion.minor, 10);
      const r = await run(bin, ['create', 'namespace', ns, '-v=8'], { env: k.env, timeout: 30_000 });
      expect(r.stdout.trim()).toBe(`namespace/${ns} created`);
      const { request, response } = createExchange(r.stderr);
      expect(response).toMatch(/201 Created/);
      const sent = /Content-Type: (application\/vnd\.kubernetes\.protobuf|application\/json)/.exec(request)?.[1];
      expect(sent).toBeDefined();
      if (minor >= 32) expect(sent).toBe('application/vnd.kubernetes.protobuf');
      if (sent === 'application/vnd.kubernetes.protobuf') expect(response).toMatch(/Content-Type: application\/vnd\.kubernetes\.protobuf/);
      expect(await ok('get', 'namespace', ns, '-o', 'jsonpath={.status.phase}')).toBe('Active');
    });

    it('create secret generic, then get it back', async () => {
      expect(await ok('create', 'secret', 'generic', 'creds', '-n', ns, '--from-literal=user=admin', '--from-literal=pw=s3cr3t')).toBe('secret/creds created\n');
      expect(await ok('get', 'secret', 'creds', '-n', ns, '-o', 'jsonpath={.data.pw}')).toBe(Buffer.from('s3cr3t').toString('base64'));
      expect(await ok('get', 'secrets', '-n', ns)).toMatch(/^creds\s+Opaque\s+2\s+/m);
    });

    it('create job: a schemaless kind whose protobuf body is read, answered in JSON', async () => {
      expect(await ok('create', 'job', 'backup', '-n', ns, '--image=busybox')).toBe('job.batch/backup created\n');
      expect(await ok('get', 'job', 'backup', '-n', ns, '-o', 'jsonpath={.spec.template.spec.containers[0].image}')).toBe('busybox');
      expect(await ok('delete', 'job', 'backup', '-n', ns)).toBe('job.batch "backup" deleted\n');
    });

    it('apply a Service + Pod, twice', async () => {
      const file = join(k.dir, `${ns}.yaml`);
      writeFileSync(file, manifest(ns));
      expect(await ok('apply', '-f', file)).toBe('service/web created\npod/web created\n');
      expect(await ok('apply', '-f', file)).toBe('service/web unchanged\npod/web unchanged\n');
      expect(await ok('get', 'pods', '-n', ns)).toMatch(/^web\s+0\/1\s+Pending\s+0\s+/m);
    });

    it('get -w streams a pod created while watching', async () => {
      const watcher = spawn(bin, ['get', 'pods', '-n', ns, '-w', '-o', 'name'], { env: k.env });
      let out = '';
      watcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
      try {
        await until('pod/web in the watch output', () => out.includes('pod/web'), { timeoutMs: 15_000 });
        await ok('run', 'late', '-n', ns, '--image=nginx:1.25', '--restart=Never');
        await until('pod/late in the watch output', () => out.includes('pod/late'), { timeoutMs: 15_000 });
      } finally {
        watcher.kill();
      }
      expect(out.split('\n')).toEqual(expect.arrayContaining(['pod/web', 'pod/late']));
    });

    it('auth whoami, auth can-i, create token and scale: their review, token and scale bodies are understood', async () => {
      expect(await ok('auth', 'whoami')).toMatch(/Username\s+admin/);
      expect(await ok('auth', 'can-i', 'create', 'pods', '-n', ns)).toBe('yes\n');
      await ok('create', 'serviceaccount', 'bot', '-n', ns);
      const token = (await ok('create', 'token', 'bot', '-n', ns)).trim();
      // A service account may do nothing until bound; `create rolebinding` posts a RoleBinding in protobuf.
      const refused = await kubectl('get', 'pods', '-n', ns, `--token=${token}`);
      expect(refused.stderr).toContain(`pods is forbidden: User "system:serviceaccount:${ns}:bot" cannot list resource "pods" in API group "" in the namespace "${ns}"`);
      expect(await ok('create', 'rolebinding', 'bot-view', '--clusterrole=view', `--serviceaccount=${ns}:bot`, '-n', ns)).toBe('rolebinding.rbac.authorization.k8s.io/bot-view created\n');
      let pods = '';
      await until('the bot-view binding in effect', async () => (pods = (await kubectl('get', 'pods', '-n', ns, `--token=${token}`, '-o', 'name')).stdout).includes('pod/web'), { timeoutMs: 15_000 });
      expect(pods).toContain('pod/web');
      const rc = join(k.dir, `${ns}-rc.yaml`);
      writeFileSync(rc, `apiVersion: v1\nkind: ReplicationController\nmetadata: {name: rc, namespace: ${ns}}\nspec: {replicas: 1, selector: {app: rc}, template: {metadata: {labels: {app: rc}}, spec: {containers: [{name: c, image: nginx}]}}}\n`);
      await ok('apply', '-f', rc);
      expect(await ok('scale', 'rc', 'rc', '-n', ns, '--replicas=2')).toBe('replicationcontroller/rc scaled\n');
    });

    it('delete the pods, the secret and the namespace', async () => {
      // --force as one does for pods on a lost node (these have no node, so a plain delete would not wait either).
      expect(await ok('delete', 'pod', 'web', 'late', '-n', ns, '--grace-period=0', '--force')).toBe('pod "web" force deleted\npod "late" force deleted\n');
      expect(await ok('delete', 'secret', 'creds', '-n', ns)).toBe('secret "creds" deleted\n');
      expect(await ok('delete', 'namespace', ns)).toBe(`namespace "${ns}" deleted\n`);
    });
  });
});

/**
 * The exact body kubectl 1.32 posts for `kubectl create namespace shop` (seen with -v=9), read field by
 * field from Kubernetes' encoding: gogo-protobuf writes every non-pointer field, even when empty.
 */
const kubectlCreateNamespace = Buffer.from(
  [
    '6b 38 73 00', //                         magic "k8s\0"
    '0a 0f', //                               Unknown.typeMeta (1), 15 bytes
    '0a 02 76 31', //                           TypeMeta.apiVersion (1) "v1"
    '12 09 4e 61 6d 65 73 70 61 63 65', //      TypeMeta.kind (2) "Namespace"
    '12 1c', //                               Unknown.raw (2), 28 bytes: a Namespace
    '0a 14', //                                 Namespace.metadata (1), 20 bytes
    '0a 04 73 68 6f 70', //                       ObjectMeta.name (1) "shop"
    '12 00 1a 00 22 00 2a 00 32 00', //           generateName, namespace, selfLink, uid, resourceVersion: ""
    '38 00', //                                   generation (7) varint 0
    '42 00', //                                   creationTimestamp (8): the zero Time, an empty message
    '12 00', //                                 Namespace.spec (2): empty
    '1a 02 0a 00', //                           Namespace.status (3): phase (1) ""
    '1a 00 22 00', //                         Unknown.contentEncoding (3), contentType (4): ""
  ].join(' ').split(' ').map((h) => parseInt(h, 16)),
);

describe('a Namespace body the way kubectl create namespace sends it', () => {
  it('decodes the hand-checked bytes (ObjectMeta\'s empty strings as absent, as Go\'s JSON omits them)', () => {
    expect(decodeProtobuf(kubectlCreateNamespace)).toStrictEqual({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop', generation: 0 },
      spec: {},
      status: { phase: '' },
    });
  });

  it('encodes a Namespace byte for byte as Kubernetes does', () => {
    const expected = Buffer.from([
      ...Buffer.from('k8s\0', 'latin1'),
      0x0a, 0x0f, 0x0a, 0x02, ...Buffer.from('v1'), 0x12, 0x09, ...Buffer.from('Namespace'),
      0x12, 0x08, 0x0a, 0x06, 0x0a, 0x04, ...Buffer.from('shop'),
      0x1a, 0x00, 0x22, 0x00,
    ]);
    expect(encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }).equals(expected)).toBe(true);
  });

  describe('over HTTP', () => {
    let s: TestServer;
    const post = async (body: Buffer) => {
      const res = await fetch(`${s.url}/api/v1/namespaces`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TestToken}`, 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf,application/json' },
        body,
      });
      return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
    };

    beforeAll(async () => {
      s = await startTestServer('memory');
    });
    afterAll(() => s.close());

    it.each([
      ['kubectl’s bytes', kubectlCreateNamespace, 'shop'],
      ['the codec’s encoding', encodeProtobuf({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop2' } }), 'shop2'],
    ])('creates from %s and answers in protobuf', async (_what, body, name) => {
      const r = await post(body);
      expect([r.status, r.type]).toEqual([201, 'application/vnd.kubernetes.protobuf']);
      const ns = decodeProtobuf(r.body) as { metadata: { name: string; uid: string }; status: { phase: string } };
      expect(ns.metadata.name).toBe(name);
      expect(ns.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(ns.status.phase).toBe('Active');
    });
  });
});
