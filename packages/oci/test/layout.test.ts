/**
 * The image layout: several processes writing into one directory at once, re-tagging that leaves
 * one entry per tag, garbage collection, and malformed layouts.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, collectGarbage, ImageLayout, REF_NAME } from '../src/index.js';

const run = promisify(execFile);
const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
let work: string;

beforeAll(() => { work = mkdtempSync(join(tmpdir(), 'oci-layout-')); });
afterAll(() => rmSync(work, { recursive: true, force: true }));

const image = (layout: ImageLayout, tag: string, text: string) =>
  buildImage(layout, { tag, layers: [{ entries: [{ path: 'f', type: 'file', data: Buffer.from(text) }] }] });

describe('ImageLayout', () => {
  it('keeps every tag and a valid index when four processes build and tag into it at once', async () => {
    const dir = join(work, 'shared');
    const script = `
      import { ImageLayout, buildImage } from ${JSON.stringify(dist)};
      const w = process.argv[1];
      const layout = await ImageLayout.open(${JSON.stringify(dir)});
      for (let i = 0; i < 10; i++) {
        // The shared layer is written by every process at once; the second one differs per image.
        await buildImage(layout, { tag: 'w' + w + '-' + i, layers: [{ entries: [{ path: 'shared', type: 'file', data: Buffer.from('same in all') }] }, { entries: [{ path: 'own', type: 'file', data: Buffer.from(w + ':' + i) }] }] });
      }`;
    await Promise.all([0, 1, 2, 3].map((w) => run(process.execPath, ['--input-type=module', '-e', script, String(w)])));
    const layout = await ImageLayout.open(dir);
    const tags = await layout.tags();
    expect(tags).toHaveLength(40);
    expect(readdirSync(join(dir, 'blobs', 'sha256')).filter((f) => !/^[a-f0-9]{64}$/.test(f))).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['blobs', 'index.json', 'oci-layout']);
    const { stdout } = await run('skopeo', ['--insecure-policy', 'inspect', `oci:${dir}:w3-9`]);
    expect(JSON.parse(stdout).Layers).toHaveLength(2);
  });

  it('re-tags without leaving the old entry, and collects the blobs no tag reaches', async () => {
    const layout = await ImageLayout.open(join(work, 'retag'));
    const first = await image(layout, 'app', 'one');
    await image(layout, 'keep', 'kept');
    const second = await image(layout, 'app', 'two');
    const index = JSON.parse(readFileSync(join(layout.dir, 'index.json'), 'utf8'));
    expect(index.manifests.filter((m: { annotations?: Record<string, string> }) => m.annotations?.[REF_NAME] === 'app')).toEqual([expect.objectContaining({ digest: second.digest })]);
    const removed = await collectGarbage(layout);
    expect(removed.sort()).toEqual([first.digest, first.manifest.config.digest, first.manifest.layers[0]!.digest].sort());
    expect(await layout.hasBlob(second.digest)).toBe(true);
    expect((await layout.resolve('keep')).digest).toBeDefined();
    expect(await layout.untag('app')).toBe(true);
    expect(await layout.tags()).toEqual(['keep']);
  });

  it('refuses a directory that is not an OCI layout and an index that is not an index', async () => {
    const bad = join(work, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'oci-layout'), '{"imageLayoutVersion":"2.0.0"}');
    await expect(ImageLayout.open(bad)).rejects.toThrow(/is not an OCI image layout this version reads/);
    const broken = await ImageLayout.open(join(work, 'broken'));
    writeFileSync(join(broken.dir, 'index.json'), '{"schemaVersion":1}');
    await expect(broken.tags()).rejects.toThrow(/index.json is not an OCI image index/);
    await expect(broken.readBlob('sha256:../../etc/passwd' as never)).rejects.toThrow(/Invalid digest/);
  });
});
