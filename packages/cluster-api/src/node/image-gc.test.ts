/**
 * Image garbage collection over a real image store (an OCI layout on disk with small images): the
 * kubelet's order and limits — nothing younger than the minimum age, nothing a container uses,
 * least recently used first, only as much as brings the disk to the low threshold, everything
 * unused past the maximum age — and the store's own cleanup: an untagged image's blobs go, but not
 * the unpacked root a container still runs from. The disk's fullness is given (this machine's disk
 * cannot be filled to a threshold for a test); the images and their removal are real.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildImage, ImageLayout } from '../../../oci/src/index.js';
import { ImageStore } from './runtime/image-store.js';
import { DefaultImageGcPolicy, ImageGarbageCollector, imageGcPolicy, type ImageGcPolicy } from './image-gc.js';
import { resolveNodeConfig } from './config.js';
import { resolveConfig } from '../config.js';

const work = mkdtempSync(join(tmpdir(), 'image-gc-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const Minute = 60_000;
let n = 0;

/** A store with images `tags` (each its own content; `a:1` and `a:latest` the same image when both are given). */
async function storeWith(tags: string[]) {
  const dir = join(work, `node-${++n}`);
  const layout = await ImageLayout.open(join(dir, 'images'));
  const digests: Record<string, string> = {};
  for (const tag of tags) {
    const content = tag.split(':')[0]!;
    const image = await buildImage(layout, { layers: [{ entries: [{ path: `${content}.txt`, type: 'file', data: Buffer.from(content.repeat(1000)) }] }], config: {}, tag });
    digests[tag] = image.digest;
  }
  return { dir, layout, digests, store: new ImageStore({ layout: layout.dir, rootfs: join(dir, 'rootfs'), layers: join(dir, 'layers') }) };
}

function collector(store: ImageStore, dir: string, opts: { inUse?: () => string[]; policy?: Partial<ImageGcPolicy>; used?: number; capacity?: number } = {}) {
  const warnings: string[] = [];
  const capacity = opts.capacity ?? 1_000_000;
  // A disk of `capacity` bytes (default 1,000,000), `used` of it taken.
  const gc = new ImageGarbageCollector({
    images: store, inUse: async () => new Set(opts.inUse?.() ?? []), dir, policy: { ...DefaultImageGcPolicy, ...opts.policy },
    log: () => undefined, warn: (reason, message) => warnings.push(`${reason}: ${message}`),
    disk: async () => ({ capacity, available: capacity - (opts.used ?? 0) }),
  });
  return { gc, warnings };
}

const tags = async (store: ImageStore) => (await store.listImages()).flatMap((i) => i.repoTags).sort();

describe('image garbage collection', () => {
  it('keeps every image younger than the minimum age, then removes unused ones least recently used first, only down to the low threshold', async () => {
    const { store, dir, digests } = await storeWith(['used:1', 'old:1', 'recent:1', 'never:1']);
    let inUse = [digests['used:1']!, digests['old:1']!, digests['recent:1']!];
    const { gc, warnings } = collector(store, dir, { inUse: () => inUse, used: 900_000 });
    const t0 = Date.now();
    // First seen now: 90 % full, yet nothing is old enough.
    expect(await gc.collect(t0)).toEqual([]);
    // old:1 stops being used first, then recent:1.
    inUse = [digests['used:1']!, digests['recent:1']!];
    await gc.collect(t0 + 1000);
    inUse = [digests['used:1']!];
    await gc.collect(t0 + 2000);
    // 90 % → 80 % is 100,000 bytes: each image is far smaller, so every unused one goes, never-used first, and the disk is still short.
    expect(await gc.collect(t0 + 3 * Minute)).toEqual(['never:1', 'old:1', 'recent:1']);
    expect(await tags(store)).toEqual(['used:1']);
    // Each pass that could not free enough says so (the first three found nothing old enough).
    expect(warnings).toHaveLength(4);
    expect(warnings[0]).toBe('FreeDiskSpaceFailed: Failed to garbage collect required amount of images. Attempted to free 100000 bytes, but only found 0 bytes eligible to free.');
    expect(warnings[3]).toMatch(/^FreeDiskSpaceFailed: Failed to garbage collect required amount of images\. Attempted to free 100000 bytes, but only found \d+ bytes eligible to free\.$/);
  });

  it('stops once the estimate reaches the low threshold, and does nothing below the high one', async () => {
    const { store, dir } = await storeWith(['a:1', 'b:1', 'c:1']);
    const sizes = (await store.listImages()).map((i) => i.size);
    expect(new Set(sizes).size).toBe(1);
    const size = sizes[0]!;
    // 85 % full of a disk a hundred images big: down to 84 % is one image.
    const { gc, warnings } = collector(store, dir, { capacity: 100 * size, used: 85 * size, policy: { minimumAgeMs: 0, lowThresholdPercent: 84 } });
    expect(await gc.collect()).toHaveLength(1);
    expect(await tags(store)).toHaveLength(2);
    expect(warnings).toEqual([]);
    const quiet = collector(store, dir, { capacity: 100 * size, used: 85 * size - 1, policy: { minimumAgeMs: 0, highThresholdPercent: 85 } });
    expect(await quiet.gc.collect()).toEqual([]);
    const off = collector(store, dir, { capacity: 100 * size, used: 100 * size - 1, policy: { minimumAgeMs: 0, highThresholdPercent: 100 } });
    expect(await off.gc.collect()).toEqual([]);
  });

  it('removes every tag of an image unused past the maximum age whatever the disk, its blobs with it, and keeps the one in use', async () => {
    const { store, dir, digests, layout } = await storeWith(['kept:1', 'gone:1', 'gone:latest']);
    const { gc } = collector(store, dir, { inUse: () => [digests['kept:1']!], used: 10_000, policy: { maximumAgeMs: 60 * Minute } });
    const t0 = Date.now();
    expect(await gc.collect(t0)).toEqual([]);
    expect(await gc.collect(t0 + 61 * Minute)).toEqual(['gone:1', 'gone:latest']);
    expect(await tags(store)).toEqual(['kept:1']);
    expect(existsSync(join(layout.dir, 'blobs', 'sha256', digests['gone:1']!.slice('sha256:'.length)))).toBe(false);
    expect(existsSync(join(layout.dir, 'blobs', 'sha256', digests['kept:1']!.slice('sha256:'.length)))).toBe(true);
  });

  it('keeps the unpacked root of an image retagged since, while a container still runs from it', async () => {
    const { store, layout } = await storeWith(['fn:latest', 'other:1']);
    const old = await store.unpackedImage('fn:latest');
    const digest = (await layout.resolve('fn:latest')).digest;
    // `fn:latest` now names another image; the old one is untagged but a process pod runs from its root.
    await buildImage(layout, { layers: [{ entries: [{ path: 'new.txt', type: 'file', data: Buffer.from('new') }] }], config: {}, tag: 'fn:latest' });
    store.inUse = async () => new Set([digest]);
    await store.removeImage({ image: 'other:1' });
    expect(existsSync(old.root)).toBe(true);
    // Once nothing runs from it, the next collection takes it.
    store.inUse = async () => new Set();
    expect(await store.collectGarbage()).toContain(old.root);
    expect(existsSync(old.root)).toBe(false);
  });

  it('takes its policy from the kubelet\'s flags, and refuses thresholds the wrong way round or a duration that is none', () => {
    expect(imageGcPolicy(resolveNodeConfig({ 'image-gc-high-threshold': '90', 'image-gc-low-threshold': '70', 'minimum-image-ttl-duration': '1m30s', 'image-maximum-gc-age': '24h' }, {}, work)))
      .toEqual({ highThresholdPercent: 90, lowThresholdPercent: 70, minimumAgeMs: 90_000, maximumAgeMs: 86_400_000 });
    expect(imageGcPolicy(resolveNodeConfig({}, {}, work))).toEqual(DefaultImageGcPolicy);
    expect(imageGcPolicy(resolveConfig({ port: 0 }, {}, work)).highThresholdPercent).toBe(100);
    expect(imageGcPolicy(resolveConfig({ port: 0 }, { CLUSTER_API_IMAGE_GC_HIGH_THRESHOLD: '95' }, work)).highThresholdPercent).toBe(95);
    expect(() => resolveNodeConfig({ 'image-gc-high-threshold': '70', 'image-gc-low-threshold': '80' }, {}, work)).toThrow('--image-gc-low-threshold (80) must not be above image-gc-high-threshold (70)');
    expect(() => resolveConfig({ 'image-gc-high-threshold': '101' }, {}, work)).toThrow('--image-gc-high-threshold must be an integer 0-100, got 101');
    expect(() => resolveNodeConfig({ 'minimum-image-ttl-duration': 'soon' }, {}, work)).toThrow('--minimum-image-ttl-duration must be a duration such as 2m or 1h30m, got "soon"');
    expect(() => resolveConfig({ 'image-maximum-gc-age': '-1h' }, {}, work)).toThrow('--image-maximum-gc-age must be a duration such as 2m or 1h30m, got "-1h"');
  });
});
