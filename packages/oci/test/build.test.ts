/**
 * Building images: reproducible digests, image-spec 1.1 config and manifest, appending onto a base,
 * and the result accepted by skopeo, umoci and GNU tar.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, entriesFromDirectory, ImageLayout, MediaType, resolveImage, sourceDateEpoch, unpackImage, writeTar } from '../src/index.js';
import { readTree } from './tree.js';

const run = promisify(execFile);
let work: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'oci-build-'));
  const src = join(work, 'src');
  mkdirSync(join(src, 'lib', 'deep'), { recursive: true });
  writeFileSync(join(src, 'index.js'), 'export const handle = () => 1;');
  writeFileSync(join(src, 'run.sh'), '#!/bin/sh\n', { mode: 0o750 });
  writeFileSync(join(src, 'lib', 'deep', `${'n'.repeat(120)}.js`), 'long name');
  symlinkSync('lib/deep', join(src, 'shortcut'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function buildFrom(dir: string, options: { created?: number } = {}) {
  const layout = await ImageLayout.open(join(work, `layout-${Math.random().toString(36).slice(2)}`));
  const entries = await entriesFromDirectory(join(work, 'src'), { prefix: 'app' });
  const image = await buildImage(layout, { tag: 'v1', layers: [{ entries, createdBy: 'test: app files' }], config: { Entrypoint: ['node'], Cmd: ['/app/index.js'], Env: ['A=1'], WorkingDir: '/app', ExposedPorts: { '8080/tcp': {} }, Labels: { x: 'y' }, User: '1000:1000' }, ...options });
  return { layout, image, dir };
}

describe('buildImage', () => {
  it('gives the same digest for the same inputs in separate layouts, and another for another SOURCE_DATE_EPOCH', async () => {
    const a = await buildFrom(work);
    const b = await buildFrom(work);
    expect(a.image.digest).toBe(b.image.digest);
    expect(a.image.manifest.layers[0]!.digest).toBe(b.image.manifest.layers[0]!.digest);
    const later = await buildFrom(work, { created: sourceDateEpoch({ SOURCE_DATE_EPOCH: '1700000000' }) });
    expect(later.image.digest).not.toBe(a.image.digest);
    expect(later.image.config.created).toBe('2023-11-14T22:13:20Z');
  });

  it('writes an image-spec 1.1 manifest and config', async () => {
    const { image, layout } = await buildFrom(work);
    expect(image.manifest).toMatchObject({ schemaVersion: 2, mediaType: MediaType.manifest, config: { mediaType: MediaType.config } });
    expect(image.manifest.layers).toEqual([expect.objectContaining({ mediaType: MediaType.layerGzip })]);
    expect(image.config).toMatchObject({
      created: '1970-01-01T00:00:00Z', os: 'linux',
      config: { Entrypoint: ['node'], Cmd: ['/app/index.js'], Env: ['A=1'], WorkingDir: '/app', ExposedPorts: { '8080/tcp': {} }, Labels: { x: 'y' }, User: '1000:1000' },
      rootfs: { type: 'layers', diff_ids: [expect.stringMatching(/^sha256:/)] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'test: app files' }],
    });
    const stored = await resolveImage(layout, 'v1');
    expect(stored.descriptor.digest).toBe(image.digest);
  });

  it('writes layers that GNU tar lists with fixed owners, times and modes', async () => {
    const { layout, image } = await buildFrom(work);
    const { stdout } = await run('tar', ['--numeric-owner', '-tvzf', layout.blobPath(image.manifest.layers[0]!.digest)]);
    const lines = stdout.trim().split('\n');
    const names = lines.map((l) => l.replace(/ -> .*$/, '').split(/\s+/).slice(-1)[0]);
    expect(names).toEqual(['app/', 'app/index.js', 'app/lib/', 'app/lib/deep/', `app/lib/deep/${'n'.repeat(120)}.js`, 'app/run.sh', 'app/shortcut']);
    expect(lines[0]).toMatch(/^drwxr-xr-x 0\/0\s+0 1970-01-01 00:00 app\/$/);
    expect(lines.find((l) => l.endsWith('run.sh'))).toMatch(/^-rwxr-xr-x 0\/0/);
    expect(lines.find((l) => l.includes('shortcut'))).toMatch(/^lrwxrwxrwx 0\/0 .* app\/shortcut -> lib\/deep$/);
  });

  it('is accepted by skopeo and umoci, and unpacks to the source tree', async () => {
    const { layout, image } = await buildFrom(work);
    const inspect = JSON.parse((await run('skopeo', ['--insecure-policy', 'inspect', `oci:${layout.dir}:v1`])).stdout);
    expect(inspect).toMatchObject({ Digest: image.digest, Labels: { x: 'y' }, Env: ['A=1'] });
    const bundle = join(work, `umoci-${Math.random().toString(36).slice(2)}`);
    await run('umoci', ['unpack', '--rootless', '--image', `${layout.dir}:v1`, bundle]);
    const ours = join(work, `ours-${Math.random().toString(36).slice(2)}`);
    await unpackImage(layout, 'v1', ours);
    expect(readTree(ours)).toEqual(readTree(join(bundle, 'rootfs')));
    expect(readTree(ours)['app/shortcut']).toBe('-> lib/deep');
  });

  it('appends layers onto a base: config merged, diff_ids and history extended, base layers kept', async () => {
    const layout = await ImageLayout.open(join(work, 'append'));
    const base = await buildImage(layout, { tag: 'base', layers: [{ entries: [{ path: 'usr/bin/node', type: 'file', mode: 0o755, data: Buffer.from('node') }], createdBy: 'base' }], config: { Env: ['PATH=/usr/bin', 'A=base'], Cmd: ['node'], Labels: { base: '1', shared: 'base' }, User: 'node' } });
    const app = await buildImage(layout, { base: 'base', tag: 'app', layers: [{ entries: [{ path: 'app/index.js', type: 'file', data: Buffer.from('app') }], createdBy: 'app' }], config: { Entrypoint: ['node', '/app/index.js'], Env: ['A=app', 'B=2'], Labels: { shared: 'app' } } });
    expect(app.manifest.layers.slice(0, 1)).toEqual(base.manifest.layers);
    expect(app.config.rootfs.diff_ids).toEqual([...base.config.rootfs.diff_ids, expect.stringMatching(/^sha256:/)]);
    expect(app.config.history?.map((h) => h.created_by)).toEqual(['base', 'app']);
    expect(app.config.config).toEqual({ Env: ['PATH=/usr/bin', 'A=app', 'B=2'], Entrypoint: ['node', '/app/index.js'], Labels: { base: '1', shared: 'app' }, User: 'node' });
    const root = join(work, 'append-root');
    await unpackImage(layout, 'app', root);
    expect(readTree(root)).toMatchObject({ 'usr/bin/node': 'node', 'app/index.js': 'app' });
  });

  it('refuses bad inputs with clear messages', async () => {
    const layout = await ImageLayout.open(join(work, 'bad'));
    expect(() => sourceDateEpoch({ SOURCE_DATE_EPOCH: 'yesterday' })).toThrow(/SOURCE_DATE_EPOCH must be a whole number of seconds/);
    expect(() => writeTar([{ path: '../x', type: 'file' }])).toThrow(/must be relative and stay inside the archive/);
    expect(() => writeTar([{ path: 'a', type: 'file' }, { path: './a', type: 'file' }])).toThrow(/Duplicate archive path a/);
    await expect(buildImage(layout, { tag: 'bad tag!', layers: [] })).rejects.toThrow(/Invalid tag "bad tag!"/);
    await expect(buildImage(layout, { base: 'nope', layers: [] })).rejects.toThrow(/No image "nope" in .* \(tags: none\)/);
  });
});
