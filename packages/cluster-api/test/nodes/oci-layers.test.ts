/**
 * Image layers on a node: each layer unpacked once per diff_id and shared read-only (the same
 * files, by inode) by every image and container that has it; containers' roots are overlays of
 * those layers with a writable layer of their own, or copies where overlayfs is not used; whiteouts
 * hide lower files either way; a container's writes reach neither the shared layers nor another
 * container; a crafted layer fails the pull with the unpacker's reason. The store's part runs where
 * overlayfs stacks layers (root); the pods' part where the oci runtime runs.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// The layouts the crafted images go into: @func/oci's sources, as ../../../oci/test/crafted.ts uses them.
import { buildImage, ImageLayout, type TarEntry } from '../../../oci/src/index.js';
import { Resources } from '@func/kube-client';
import { ImageStore } from '../../src/node/runtime/image-store.js';
import { mountRootfs, unmountRootfs } from '../../src/node/runtime/oci/rootfs.js';
import { overlaySupported } from '../../src/node/runtime/overlay.js';
import { privatePodCidr } from '../../src/node/runtime/oci/pod-cidr.js';
import { imageFromTars, rawTar, type RawEntry } from '../../../oci/test/crafted.js';
import { readTree } from '../../../oci/test/tree.js';
import { execIn, ociMissing } from '../support/oci-fixtures.js';
import { isReady, podUntil, useNodeCluster } from '../support/node-fixtures.js';

const work = mkdtempSync(join(tmpdir(), 'oci-layers-'));
const overlayMissing = process.getuid?.() !== 0 ? 'not root' : !(await overlaySupported(join(work, 'check'))) ? 'overlayfs does not stack layers here' : undefined;

const file = (path: string, text: string): TarEntry => ({ path, type: 'file', data: Buffer.from(text) });
const base: TarEntry[] = [
  { path: 'bin/', type: 'dir' }, file('bin/tool', 'the base tool'),
  { path: 'etc/', type: 'dir' }, file('etc/passwd', 'root:x:0:0::/root:/bin/sh\n'), file('etc/group', 'root:x:0:\n'),
  { path: 'tmp/', type: 'dir', mode: 0o1777 },
];

describe.skipIf(overlayMissing)(`the node's layer store${overlayMissing ? ` (skipped: ${overlayMissing})` : ''}`, () => {
  let n = 0;
  const mounted: string[] = [];
  afterAll(async () => {
    for (const b of mounted) await unmountRootfs(b);
    rmSync(work, { recursive: true, force: true });
  });

  const fresh = async (overlay?: boolean) => {
    const dir = join(work, `node-${++n}`);
    const layout = await ImageLayout.open(join(dir, 'images'));
    return { dir, layout, store: new ImageStore({ layout: layout.dir, rootfs: join(dir, 'rootfs'), layers: join(dir, 'layers'), ...(overlay === undefined ? {} : { overlay }) }) };
  };
  const bundleOf = async (store: ImageStore, dir: string, ref: string) => {
    const bundle = join(dir, 'bundles', `b${++n}`);
    mkdirSync(bundle, { recursive: true });
    mounted.push(bundle);
    await mountRootfs(await store.rootfsImage(ref), bundle);
    return bundle;
  };

  it('two images sharing a base layer unpack it once: one directory per diff_id, the same files (inodes) under both images\' containers', async () => {
    const { dir, layout, store } = await fresh();
    await buildImage(layout, { layers: [{ entries: base }, { entries: [file('app/a', 'image a')] }], config: {}, tag: 'a:1' });
    await buildImage(layout, { layers: [{ entries: base }, { entries: [file('app/b', 'image b')] }], config: {}, tag: 'b:1' });
    const [a, b, again] = await Promise.all([store.rootfsImage('a:1'), store.rootfsImage('b:1'), store.rootfsImage('a:1')]);
    expect(a.overlay).toBe(true);
    expect(a.layers[0]).toBe(b.layers[0]);
    expect(again.layers).toEqual(a.layers);
    // base, a's top, b's top: nothing half-unpacked left.
    expect(readdirSync(join(dir, 'layers')).sort()).toEqual([...new Set([...a.layers, ...b.layers])].map((l) => l.split('/').pop()).sort());
    expect(readdirSync(join(dir, 'layers'))).toHaveLength(3);
    const shared = statSync(join(a.layers[0]!, 'bin', 'tool')).ino;
    const [ca, cb] = [await bundleOf(store, dir, 'a:1'), await bundleOf(store, dir, 'b:1')];
    expect(statSync(join(ca, 'rootfs', 'bin', 'tool')).ino).toBe(shared);
    expect(statSync(join(cb, 'rootfs', 'bin', 'tool')).ino).toBe(shared);
    expect(readTree(join(ca, 'rootfs'))).toMatchObject({ 'app/a': 'image a', 'bin/tool': 'the base tool' });
    expect(existsSync(join(ca, 'rootfs', 'app', 'b'))).toBe(false);
    expect(statSync(join(ca, 'rootfs', 'tmp')).mode & 0o7777).toBe(0o1777);
    // Another store on the same directories (another agent, a restart) finds the layers unpacked.
    const other = new ImageStore({ layout: layout.dir, rootfs: join(dir, 'rootfs'), layers: join(dir, 'layers') });
    expect((await other.rootfsImage('b:1')).layers).toEqual(b.layers);
    expect(statSync(join(b.layers[0]!, 'bin', 'tool')).ino).toBe(shared);
  });

  it('two stores (two agents, or an agent and its restart) unpacking the same layers at once: one directory each, whole, no temporary left', async () => {
    const { dir, layout } = await fresh();
    await buildImage(layout, { layers: [{ entries: base }, { entries: [file('app/a', 'image a')] }], config: {}, tag: 'a:1' });
    const stores = [0, 1, 2].map(() => new ImageStore({ layout: layout.dir, rootfs: join(dir, 'rootfs'), layers: join(dir, 'layers') }));
    const got = await Promise.all(stores.map((s) => s.rootfsImage('a:1')));
    expect(got[1]!.layers).toEqual(got[0]!.layers);
    expect(got[2]!.layers).toEqual(got[0]!.layers);
    expect(readdirSync(join(dir, 'layers')).sort()).toEqual(got[0]!.layers.map((l) => l.split('/').pop()).sort());
    expect(readTree(got[0]!.layers[0]!)).toEqual({ bin: 'dir', 'bin/tool': 'the base tool', etc: 'dir', 'etc/group': 'root:x:0:\n', 'etc/passwd': 'root:x:0:0::/root:/bin/sh\n', tmp: 'dir' });
    expect(readTree(got[0]!.layers[1]!)).toEqual({ app: 'dir', 'app/a': 'image a' });
  });

  const whiteouts: RawEntry[][] = [
    [{ name: 'a/', type: '5', mode: 0o755 }, { name: 'a/x', data: 'x1' }, { name: 'a/y', data: 'y1' }, { name: 'b/', type: '5' }, { name: 'b/z', data: 'z1' }, { name: 'c/', type: '5' }, { name: 'c/deep', data: 'd' }, { name: 'keep', data: 'k' }],
    [{ name: 'a/.wh.x' }, { name: 'b/.wh..wh..opq' }, { name: 'b/new', data: 'new' }, { name: '.wh.c' }, { name: 'a/y', data: 'y2' }],
  ];
  const hidden = { a: 'dir', 'a/y': 'y2', b: 'dir', 'b/new': 'new', keep: 'k' };

  it.each([['overlay', true], ['copy', false]] as const)('whiteouts hide the lower layers\' files in a container\'s root (%s)', async (_mode, overlay) => {
    const { dir, layout, store } = await fresh(overlay);
    await imageFromTars(layout, 'w:1', whiteouts.map(rawTar));
    const image = await store.rootfsImage('w:1');
    expect(image.overlay).toBe(overlay);
    expect(image.layers).toHaveLength(overlay ? 2 : 1);
    const bundle = await bundleOf(store, dir, 'w:1');
    expect(readTree(join(bundle, 'rootfs'))).toEqual(hidden);
    // The process runtime's image, unpacked whole, is the same tree.
    expect(readTree((await store.unpackedImage('w:1')).root)).toEqual(hidden);
  });

  it('a container\'s writes (new, changed and removed files) stay in its own writable layer: not in the shared layers, not in another container; removed with it', async () => {
    const { dir, layout, store } = await fresh();
    await buildImage(layout, { layers: [{ entries: base }], config: {}, tag: 'base:1' });
    const [layer] = (await store.rootfsImage('base:1')).layers;
    const before = readTree(layer!);
    const [one, two] = [await bundleOf(store, dir, 'base:1'), await bundleOf(store, dir, 'base:1')];
    writeFileSync(join(one, 'rootfs', 'bin', 'new'), 'written');
    writeFileSync(join(one, 'rootfs', 'etc', 'passwd'), 'changed\n');
    unlinkSync(join(one, 'rootfs', 'etc', 'group'));
    expect(readTree(join(one, 'rootfs'))).toMatchObject({ 'bin/new': 'written', 'etc/passwd': 'changed\n' });
    expect(readTree(layer!)).toEqual(before);
    expect(readTree(join(two, 'rootfs'))).toEqual(before);
    expect(readFileSync(join(one, 'upper', 'bin', 'new'), 'utf8')).toBe('written');
    expect(lstatSync(join(one, 'upper', 'etc', 'group')).isCharacterDevice()).toBe(true);
    await unmountRootfs(one);
    rmSync(one, { recursive: true, force: true });
    expect(readTree(layer!)).toEqual(before);
    expect(readTree(join(two, 'rootfs'))).toEqual(before);
  });

  it.each<[string, RawEntry[], RegExp]>([
    ['a traversal entry', [{ name: '../../evil', data: 'x' }], /Refusing path "\.\.\/\.\.\/evil" in a layer: it contains \.\./],
    ['a whiteout of ..', [{ name: 'a/', type: '5' }, { name: 'a/.wh...' }], /Refusing whiteout "a\/\.wh\.\.\." in a layer: it names no single entry/],
    ['a device', [{ name: 'dev/null', type: '3' }], /Refusing a char device at dev\/null/],
  ])('a layer with %s fails with the reason, and leaves no layer directory behind', async (_what, entries, message) => {
    const { dir, layout, store } = await fresh();
    await imageFromTars(layout, 'bad:1', [rawTar([{ name: 'ok', data: 'fine' }]), rawTar(entries)]);
    await expect(store.rootfsImage('bad:1')).rejects.toThrow(message);
    // The good layer stays (another image may share it); the bad one left nothing, not even a temporary directory.
    expect(readdirSync(join(dir, 'layers'))).toHaveLength(1);
    expect(existsSync(join(work, 'evil'))).toBe(false);
  });

  it('garbage collection removes the layers and unpacked images no image references, and keeps a layer a mounted container still uses', async () => {
    const { dir, layout, store } = await fresh();
    await buildImage(layout, { layers: [{ entries: base }, { entries: [file('app/a', 'a')] }], config: {}, tag: 'a:1' });
    await buildImage(layout, { layers: [{ entries: base }, { entries: [file('app/b', 'b')] }], config: {}, tag: 'b:1' });
    await buildImage(layout, { layers: [{ entries: [file('c', 'c')] }], config: {}, tag: 'c:1' });
    const [a, b, c] = [await store.rootfsImage('a:1'), await store.rootfsImage('b:1'), await store.rootfsImage('c:1')];
    const flat = (await store.unpackedImage('a:1')).root;
    await bundleOf(store, dir, 'c:1');
    mkdirSync(join(dir, 'layers', `${'0'.repeat(64)}.dead.tmp`));
    expect(await store.collectGarbage()).toEqual([join(dir, 'layers', `${'0'.repeat(64)}.dead.tmp`)]);
    await layout.untag('c:1');
    await store.removeImage({ image: 'a:1' });
    // a's own layer and its unpacked copy go; the base (b has it) stays; c's layer stays while its container's overlay is mounted.
    expect(readdirSync(join(dir, 'layers')).sort()).toEqual([b.layers[0], b.layers[1], c.layers[0]].map((l) => l!.split('/').pop()).sort());
    expect(existsSync(a.layers[1]!)).toBe(false);
    expect(existsSync(flat)).toBe(false);
    await expect(store.rootfsImage('a:1')).rejects.toThrow('image "a:1" is not in this node\'s image store');
    expect(readTree(join(b.layers[0]!))).toMatchObject({ 'bin/tool': 'the base tool' });
  });
});

describe.skipIf(ociMissing)(`layers under runc${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  const current = useNodeCluster({ nodes: [{ name: 'oci-l', options: { containerRuntime: 'oci' } }], nodeControllers: { clusterCidr: privatePodCidr(`oci-layers-test-${process.pid}`), nodeCidrMaskSize: 24 } });
  const agent = () => current.cluster.agents.get('oci-l')!;

  it('function pods of one image share its layers; one pod\'s writes reach neither the layers nor the other pod', async () => {
    const { kube, cluster } = current;
    for (const name of ['w1', 'w2']) await kube.create(Resources.pods, { metadata: { name }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
    const [w1, w2] = [await podUntil(kube, 'w1', 'Ready', isReady, 90_000), await podUntil(kube, 'w2', 'Ready', isReady, 90_000)];
    const layers = join(cluster.dir, 'oci-l', 'layers');
    const manifestLayers = readdirSync(layers);
    expect(manifestLayers.length).toBeGreaterThanOrEqual(2);
    const write = await execIn(agent(), w1, ['node', '-e', 'require("fs").writeFileSync("/tmp/mine", "w1"); console.log(require("fs").readFileSync("/tmp/mine", "utf8"))']);
    expect(write).toEqual({ exitCode: 0, stdout: 'w1\n', stderr: '' });
    const look = await execIn(agent(), w2, ['node', '-e', 'console.log(require("fs").existsSync("/tmp/mine"))']);
    expect(look.stdout).toBe('false\n');
    expect(manifestLayers.some((l) => existsSync(join(layers, l, 'tmp', 'mine')))).toBe(false);
    expect(readdirSync(layers)).toEqual(manifestLayers);
  }, 180_000);

  it('a crafted layer in an image fails its pull with the unpacker\'s reason (ErrImagePull)', async () => {
    const { kube, cluster } = current;
    await imageFromTars(await ImageLayout.open(cluster.images), 'crafted:v1', [rawTar([{ name: 'ok', data: 'x' }]), rawTar([{ name: 'a/', type: '5' }, { name: 'a/.wh...' }])]);
    await kube.create(Resources.pods, { metadata: { name: 'crafted' }, spec: { containers: [{ name: 'c', image: 'crafted:v1', command: ['sh'] }] } });
    const pod = await podUntil(kube, 'crafted', 'ErrImagePull', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.message?.includes('Refusing whiteout'), 60_000);
    expect(pod.status.containerStatuses[0].state.waiting).toMatchObject({ reason: expect.stringMatching(/^(ErrImagePull|ImagePullBackOff)$/), message: expect.stringContaining('Refusing whiteout "a/.wh..." in a layer: it names no single entry') });
  }, 90_000);
});
