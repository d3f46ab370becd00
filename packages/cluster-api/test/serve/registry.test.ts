/**
 * `serve`'s OCI distribution registry as clients use it: its address in the `listening` line and in
 * kube-public/local-registry-hosting (KEP-1755), `skopeo copy` of a busybox image built here into
 * it with a token the API accepts, pulls without credentials, the pushed image run by a pod, and
 * every malformed or unauthorized request answered with a distribution error body.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skopeo } from '../../../oci/test/registry-server.js';
import { busyboxLayout, ociMissing } from '../support/oci-fixtures.js';
import { haveKubectl, startServe, type ServeProcess, stopServe } from './process.js';
import { until } from '../../testing/src/poll.js';

const Admin = 'registry-admin-token-0123456789';
const Dev = 'registry-dev-token-0123456789';
const sha = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

let s: ServeProcess;
let host: string;
let layoutDir: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'registry-test-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${Admin},admin,1,"system:masters"\n${Dev},dev,2\n`);
  layoutDir = join(dir, 'layout');
  await busyboxLayout(layoutDir);
  // The oci runtime where this machine has it (the pushed busybox then really runs); processes otherwise.
  s = await startServe(['--storage', 'memory:', '--no-broker', '--disable', 'gateway', '--token-auth-file', tokens], ociMissing ? {} : { CLUSTER_API_CONTAINER_RUNTIME: 'oci' });
  host = /"registry":"([^"]+)"/.exec(s.log())![1]!;
}, 60_000);

afterAll(() => stopServe(s), 60_000);

const v2 = (path: string, init: RequestInit & { token?: string } = {}) =>
  fetch(`http://${host}/v2/${path}`, { ...init, headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.headers as Record<string, string>) } });
const errorCode = async (r: Response) => ((await r.json()) as { errors: { code: string }[] }).errors[0]!.code;

describe.skipIf(!haveKubectl)('serve: the image registry', () => {
  it('is in the listening line and advertised in kube-public/local-registry-hosting, labelled as the server\'s own', async () => {
    expect(host).toMatch(/^127\.0\.0\.1:\d+$/);
    if (!ociMissing) expect(s.log()).toMatch(/"msg":"listening".*"containerRuntime":"oci"/);
    const got = await until('local-registry-hosting', async () => {
      const r = await s.kubectl('get', 'configmap', '-n', 'kube-public', 'local-registry-hosting', '-o', 'json');
      return r.code === 0 ? (JSON.parse(r.stdout) as { data: Record<string, string>; metadata: { labels: Record<string, string> } }) : undefined;
    });
    expect(got.metadata.labels['app.kubernetes.io/managed-by']).toBe('cluster-api');
    const yaml = got.data['localRegistryHosting.v1']!;
    expect(yaml).toContain(`host: "${host}"`);
    expect(yaml).toContain(`hostFromContainerRuntime: "${host}"`);
    // Pods in network namespaces of their own (oci) do not reach the registry's loopback address; process pods do.
    if (ociMissing) expect(yaml).toContain(`hostFromClusterNetwork: "${host}"`);
    else expect(yaml).not.toContain('hostFromClusterNetwork');
    expect(yaml).toMatch(/^help: ".+"$/m);
  });

  it('a --registry-port in use ends serve with one line naming the flag', async () => {
    const port = host.split(':')[1]!;
    const err = await startServe(['--storage', 'memory:', '--no-broker', '--disable', 'gateway,node', '--registry-port', port]).then(() => 'started', (e: Error) => e.message);
    expect(err).toContain(`cluster-api: the registry's port ${port} on 127.0.0.1 is in use: pick another with --registry-port`);
  });

  it('takes `skopeo copy` with a token the API accepts; pulls need none; tags list and catalog name it; a pod runs it', async () => {
    await skopeo(['copy', '--dest-tls-verify=false', '--dest-creds', `anyone:${Admin}`, `oci:${layoutDir}:busybox:test`, `docker://${host}/test/busybox:1`]);
    const inspected = JSON.parse(await skopeo(['inspect', '--tls-verify=false', '--no-creds', `docker://${host}/test/busybox:1`])) as { Digest: string; Layers: string[] };
    expect(inspected.Layers).toHaveLength(1);
    expect(await (await v2('test/busybox/tags/list')).json()).toEqual({ name: 'test/busybox', tags: ['1'] });
    expect(((await (await v2('_catalog')).json()) as { repositories: string[] }).repositories).toContain('test/busybox');
    const manifest = await v2(`test/busybox/manifests/${inspected.Digest}`, { method: 'HEAD' });
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('docker-content-digest')).toBe(inspected.Digest);
    // A copy back out, anonymously, is the same image.
    const back = mkdtempSync(join(tmpdir(), 'registry-back-'));
    await skopeo(['copy', '--src-tls-verify=false', '--src-no-creds', `docker://${host}/test/busybox:1`, `oci:${back}:out`]);
    expect(JSON.parse(await skopeo(['inspect', `oci:${back}:out`])).Digest).toBe(inspected.Digest);

    const ref = `${host}/test/busybox:1`;
    expect((await s.kubectl('run', 'bb', `--image=${ref}`, '--restart=Never', '--command', '--', 'sh', '-c', 'echo hello from the registry; sleep 3600')).code).toBe(0);
    const phase = await until('bb Running', async () => {
      const r = await s.kubectl('get', 'pod', 'bb', '-o', 'jsonpath={.status.phase} {.status.containerStatuses[0].imageID}');
      return r.stdout.startsWith('Running') ? r.stdout : undefined;
    }, { timeoutMs: 90_000 });
    expect(phase).toContain(inspected.Digest);
    const events = await s.kubectl('get', 'events', '--field-selector', 'involvedObject.name=bb', '-o', 'jsonpath={.items[*].message}');
    expect(events.stdout).toContain(`Successfully pulled image "${ref}"`);
    if (!ociMissing) expect(await until('bb log', async () => (await s.kubectl('logs', 'bb')).stdout.includes('hello from the registry'), { timeoutMs: 30_000 })).toBe(true);
  }, 180_000);

  it('refuses a push without credentials, with a token the API does not accept, and by a user RBAC does not allow', async () => {
    const none = await v2('x/blobs/uploads/', { method: 'POST' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
    expect(await errorCode(none)).toBe('UNAUTHORIZED');
    const ping = await v2('');
    expect(ping.status).toBe(401);
    expect((await v2('', { token: Admin })).status).toBe(200);
    const wrong = await v2('x/blobs/uploads/', { method: 'POST', token: 'not-a-token' });
    expect([wrong.status, await errorCode(wrong)]).toEqual([401, 'UNAUTHORIZED']);
    const basicWrong = await v2('x/tags/list', { headers: { authorization: `Basic ${Buffer.from('u:nope').toString('base64')}` } });
    expect([basicWrong.status, await errorCode(basicWrong)]).toEqual([401, 'UNAUTHORIZED']);
    const dev = await v2('x/blobs/uploads/', { method: 'POST', token: Dev });
    expect([dev.status, await errorCode(dev)]).toEqual([403, 'DENIED']);
    // A pull by the same user is allowed (any authenticated user, or anyone, may pull).
    expect((await v2('test/busybox/tags/list', { token: Dev })).status).toBe(200);
  });

  it('answers malformed requests with distribution error bodies and no internal text', async () => {
    const cases: [string, RequestInit & { token?: string }, number, string][] = [
      ['../../etc/passwd/manifests/latest', {}, 404, 'NAME_UNKNOWN'],
      ['Upper/blobs/uploads/', { method: 'POST', token: Admin }, 400, 'NAME_INVALID'],
      ['a%2F..%2Fb/tags/list', {}, 400, 'NAME_INVALID'],
      ['x/manifests/bad tag', {}, 400, 'TAG_INVALID'],
      ['x/blobs/sha256:nothex', {}, 400, 'DIGEST_INVALID'],
      [`x/blobs/md5:${'a'.repeat(32)}`, {}, 400, 'UNSUPPORTED'],
      [`x/blobs/${sha('nothing')}`, {}, 404, 'BLOB_UNKNOWN'],
      ['x/manifests/latest', {}, 404, 'MANIFEST_UNKNOWN'],
      ['nope/tags/list', {}, 404, 'NAME_UNKNOWN'],
      ['x/manifests/latest', { method: 'PUT', token: Admin, body: 'not json' }, 400, 'MANIFEST_INVALID'],
      ['x/manifests/latest', { method: 'PUT', token: Admin, body: JSON.stringify({ schemaVersion: 1 }) }, 400, 'MANIFEST_INVALID'],
      ['x/manifests/latest', { method: 'PUT', token: Admin, headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }, body: JSON.stringify({ schemaVersion: 2, config: { digest: '../../x' }, layers: [] }) }, 400, 'MANIFEST_INVALID'],
      ['x/manifests/latest', { method: 'PUT', token: Admin, headers: { 'content-type': 'application/vnd.oci.image.manifest.v1+json' }, body: JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.manifest.v1+json', config: { digest: sha('absent'), size: 6 }, layers: [] }) }, 400, 'MANIFEST_BLOB_UNKNOWN'],
      [`x/manifests/${sha('other')}`, { method: 'PUT', token: Admin, body: JSON.stringify({ schemaVersion: 2, manifests: [] }) }, 400, 'DIGEST_INVALID'],
      ['x/manifests/big', { method: 'PUT', token: Admin, body: Buffer.alloc(5 * 1024 * 1024, 32) }, 413, 'SIZE_INVALID'],
      ['x/blobs/uploads/00000000-0000-0000-0000-000000000000', { method: 'PATCH', token: Admin, body: 'x' }, 404, 'BLOB_UPLOAD_UNKNOWN'],
      ['x/blobs/uploads/not-a-uuid', { method: 'GET' }, 404, 'BLOB_UPLOAD_UNKNOWN'],
      [`x/blobs/uploads/?digest=${sha('right')}`, { method: 'POST', token: Admin, body: 'wrong' }, 400, 'DIGEST_INVALID'],
      ['x/blobs/uploads/?digest=sha256:zz', { method: 'POST', token: Admin, body: 'x' }, 400, 'DIGEST_INVALID'],
      [`x/blobs/${sha('nothing')}`, { method: 'DELETE', token: Admin }, 405, 'UNSUPPORTED'],
      ['_catalog?n=-1', {}, 400, 'SIZE_INVALID'],
    ];
    for (const [path, init, status, code] of cases) {
      const r = await v2(path, init);
      const text = await r.text();
      expect([path, r.status, (JSON.parse(text) as { errors: { code: string }[] }).errors[0]!.code]).toEqual([path, status, code]);
      expect(text).not.toMatch(/\/tmp\/|at [\w.]+ \(|Error:|ENOENT|node:/);
    }
    expect(s.alive()).toBe(true);
  });

  it('takes a chunked upload in order, refuses an out-of-order chunk with 416, and a monolithic POST; a mount of a blob it has', async () => {
    const blob = Buffer.from('0123456789abcdefghij');
    const digest = sha(blob);
    const opened = await v2('chunks/blobs/uploads/', { method: 'POST', token: Admin });
    expect(opened.status).toBe(202);
    const location = opened.headers.get('location')!;
    const at = (path: string, init: RequestInit) => fetch(new URL(path, `http://${host}`), { ...init, headers: { authorization: `Bearer ${Admin}`, ...(init.headers as Record<string, string>) } });
    const first = await at(location, { method: 'PATCH', headers: { 'content-range': '0-9', 'content-type': 'application/octet-stream' }, body: blob.subarray(0, 10) });
    expect([first.status, first.headers.get('range')]).toEqual([202, '0-9']);
    const skipped = await at(first.headers.get('location')!, { method: 'PATCH', headers: { 'content-range': '15-19' }, body: blob.subarray(15) });
    expect([skipped.status, await errorCode(skipped), skipped.headers.get('range')]).toEqual([416, 'BLOB_UPLOAD_INVALID', '0-9']);
    const second = await at(location, { method: 'PATCH', headers: { 'content-range': '10-19' }, body: blob.subarray(10) });
    expect(second.headers.get('range')).toBe('0-19');
    const status = await at(location, { method: 'GET' });
    expect([status.status, status.headers.get('range')]).toEqual([204, '0-19']);
    const done = await at(`${location}?digest=${digest}`, { method: 'PUT' });
    expect([done.status, done.headers.get('docker-content-digest')]).toEqual([201, digest]);
    const got = await v2(`chunks/blobs/${digest}`);
    expect(Buffer.from(await got.arrayBuffer()).equals(blob)).toBe(true);
    const mono = Buffer.from('one request');
    expect((await v2(`mono/blobs/uploads/?digest=${sha(mono)}`, { method: 'POST', token: Admin, body: mono })).status).toBe(201);
    const mounted = await v2(`other/blobs/uploads/?mount=${digest}&from=chunks`, { method: 'POST', token: Admin });
    expect([mounted.status, mounted.headers.get('location')]).toEqual([201, `/v2/other/blobs/${digest}`]);
  });
});
