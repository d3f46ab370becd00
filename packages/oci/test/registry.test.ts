/**
 * The registry client against a real registry (CNCF distribution 2.x, Debian's docker-registry),
 * checked with skopeo: push, pull, tag, mount, chunked uploads, indexes, and errors.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, ImageLayout, MediaType, pullImage, pushImage, RegistryClient, RegistryError, resolveImage, sha256, unpackImage } from '../src/index.js';
import { haveRegistry, type RunningRegistry, skopeo, startRegistry } from './registry-server.js';
import { readTree } from './tree.js';

const file = (path: string, text: string) => ({ path, type: 'file' as const, data: Buffer.from(text) });

describe.skipIf(!haveRegistry)('registry client against docker-registry', () => {
  let registry: RunningRegistry;
  let work: string;
  let layout: ImageLayout;

  beforeAll(async () => {
    registry = await startRegistry();
    work = mkdtempSync(join(tmpdir(), 'oci-push-'));
    layout = await ImageLayout.open(join(work, 'layout'));
    await buildImage(layout, {
      tag: 'app',
      layers: [{ entries: [file('srv/index.js', 'export const handle = () => "hi";'), { path: 'srv/big.bin', type: 'file' as const, data: randomBytes(300_000) }] }, { entries: [file('srv/README', 'second layer')] }],
      config: { Entrypoint: ['node', '/srv/index.js'], Env: ['PORT=8080'], Labels: { 'dev.func.test': 'yes' } },
    });
  });
  afterAll(async () => {
    await registry?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('pushes an image by tag that skopeo inspects with the same digest, labels and layers', async () => {
    const result = await pushImage(layout, 'app', `${registry.host}/team/app:v1`);
    expect(result.reference).toBe(`${registry.host}/team/app@${result.digest}`);
    expect(result.uploaded).toBe(3);
    const inspect = JSON.parse(await skopeo(['inspect', '--tls-verify=false', `docker://${registry.host}/team/app:v1`]));
    expect(inspect.Digest).toBe(result.digest);
    expect(inspect.Labels).toEqual({ 'dev.func.test': 'yes' });
    expect(inspect.Layers).toEqual((await resolveImage(layout, 'app')).manifest.layers.map((l) => l.digest));
    const again = await pushImage(layout, 'app', `${registry.host}/team/app:v2`);
    expect(again).toMatchObject({ digest: result.digest, uploaded: 0, existing: 3 });
  });

  it('mounts blobs from another repository instead of uploading them', async () => {
    await pushImage(layout, 'app', `${registry.host}/team/app:v1`);
    const before = registry.requests.filter((r) => r.startsWith('PUT') && r.includes('/blobs/uploads/')).length;
    const result = await pushImage(layout, 'app', `${registry.host}/other/app:v1`, { mountFrom: 'team/app' });
    expect(result).toMatchObject({ mounted: 3, uploaded: 0 });
    expect(registry.requests.filter((r) => r.startsWith('PUT') && r.includes('/blobs/uploads/')).length).toBe(before);
    expect(registry.requests.some((r) => r.startsWith('POST /v2/other/app/blobs/uploads/?mount='))).toBe(true);
    const inspect = JSON.parse(await skopeo(['inspect', '--tls-verify=false', `docker://${registry.host}/other/app:v1`]));
    expect(inspect.Digest).toBe(result.digest);
  });

  it('uploads a large blob in PATCH chunks that skopeo then copies intact', async () => {
    const result = await pushImage(layout, 'app', `${registry.host}/chunked/app:v1`, { chunkSize: 64 * 1024 });
    expect(registry.requests.filter((r) => r.startsWith('PATCH /v2/chunked/app/blobs/uploads/')).length).toBeGreaterThan(1);
    const out = join(work, 'copied');
    await skopeo(['copy', '--src-tls-verify=false', `docker://${registry.host}/chunked/app:v1`, `oci:${out}:copy`]);
    const copied = await ImageLayout.open(out);
    expect((await copied.resolve('copy')).digest).toBe(result.digest);
  });

  it('pulls what skopeo pushed from our layout, and the pulled image unpacks to the same files', async () => {
    await skopeo(['copy', '--dest-tls-verify=false', `oci:${layout.dir}:app`, `docker://${registry.host}/by-skopeo/app:v1`]);
    const target = await ImageLayout.open(join(work, 'pulled'));
    const desc = await pullImage(`${registry.host}/by-skopeo/app:v1`, target, { tag: 'pulled' });
    expect(desc.digest).toBe((await layout.resolve('app')).digest);
    await unpackImage(target, 'pulled', join(work, 'root'));
    expect(readTree(join(work, 'root'))['srv/index.js']).toBe('export const handle = () => "hi";');
  });

  it('pushes an index with its platform manifests and pulls the one for the asked platform', async () => {
    const amd = await buildImage(layout, { platform: { os: 'linux', architecture: 'amd64' }, layers: [{ entries: [file('arch', 'amd64')] }] });
    const arm = await buildImage(layout, { platform: { os: 'linux', architecture: 'arm64' }, layers: [{ entries: [file('arch', 'arm64')] }] });
    const index = { schemaVersion: 2, mediaType: MediaType.index, manifests: [
      { ...amd.descriptor, platform: { os: 'linux', architecture: 'amd64' } },
      { ...arm.descriptor, platform: { os: 'linux', architecture: 'arm64' } },
    ] };
    const blob = await layout.writeBlob(Buffer.from(JSON.stringify(index)));
    await layout.tag('multi', { mediaType: MediaType.index, ...blob });
    const pushed = await pushImage(layout, 'multi', `${registry.host}/multi/app:v1`);
    expect(pushed.digest).toBe(blob.digest);
    const raw = JSON.parse(await skopeo(['inspect', '--raw', '--tls-verify=false', `docker://${registry.host}/multi/app:v1`]));
    expect(raw.manifests).toHaveLength(2);
    const target = await ImageLayout.open(join(work, 'pulled-arm'));
    const desc = await pullImage(`${registry.host}/multi/app:v1`, target, { platform: { os: 'linux', architecture: 'arm64' }, tag: 'arm' });
    expect(desc.digest).toBe(arm.digest);
    await expect(pullImage(`${registry.host}/multi/app:v1`, target, { platform: { os: 'linux', architecture: 's390x' } })).rejects.toThrow(/no manifest for linux\/s390x \(it offers: linux\/amd64, linux\/arm64\)/);
  });

  it('pushes a manifest by digest, and pulls by digest', async () => {
    const digest = (await layout.resolve('app')).digest;
    const result = await pushImage(layout, 'app', `${registry.host}/bydigest/app@${digest}`);
    expect(result.digest).toBe(digest);
    const client = new RegistryClient(registry.host);
    try {
      const got = await client.getManifest('bydigest/app', digest);
      expect(sha256(got.body)).toBe(digest);
      expect(got.mediaType).toBe(MediaType.manifest);
    } finally {
      client.close();
    }
  });

  it('pulls a Docker schema 2 base, appends our layers onto it and pushes an image skopeo reads', async () => {
    await skopeo(['copy', '--format', 'v2s2', '--dest-tls-verify=false', `oci:${layout.dir}:app`, `docker://${registry.host}/base/node:22`]);
    const target = await ImageLayout.open(join(work, 'appended'));
    const base = await pullImage(`${registry.host}/base/node:22`, target, { tag: 'base' });
    expect(base.mediaType).toBe(MediaType.dockerManifest);
    const image = await buildImage(target, { base: 'base', tag: 'fn', layers: [{ entries: [file('srv/fn.js', 'fn')] }], config: { Env: ['FN=1'] } });
    expect(image.manifest.layers.map((l) => l.mediaType)).toEqual([MediaType.layerGzip, MediaType.layerGzip, MediaType.layerGzip]);
    const pushed = await pushImage(target, 'fn', `${registry.host}/apps/fn:v1`, { mountFrom: 'base/node' });
    expect(pushed).toMatchObject({ mounted: 2, uploaded: 2 });
    const inspect = JSON.parse(await skopeo(['inspect', '--tls-verify=false', `docker://${registry.host}/apps/fn:v1`]));
    expect(inspect).toMatchObject({ Digest: pushed.digest, Env: ['PORT=8080', 'FN=1'], Labels: { 'dev.func.test': 'yes' } });
    const root = join(work, 'appended-root');
    await unpackImage(target, 'fn', root);
    expect(readTree(root)).toMatchObject({ 'srv/index.js': 'export const handle = () => "hi";', 'srv/fn.js': 'fn', 'srv/README': 'second layer' });
  });

  it('says not found for a missing repository or tag, unreachable for a closed port', async () => {
    const target = await ImageLayout.open(join(work, 'missing'));
    const missing = await pullImage(`${registry.host}/nobody/here:v1`, target).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(RegistryError);
    expect(missing).toMatchObject({ code: 'not-found' });
    expect((missing as Error).message).toMatch(/Not found: pulling manifest nobody\/here:v1 \((NAME_UNKNOWN|MANIFEST_UNKNOWN)/);
    const closed = await pullImage('127.0.0.1:1/x/y:v1', target).catch((e: unknown) => e);
    expect(closed).toMatchObject({ code: 'unreachable', message: expect.stringMatching(/Cannot reach the registry 127\.0\.0\.1:1 \(ECONNREFUSED\)/) });
  });
});
