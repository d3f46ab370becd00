#!/usr/bin/env node
/**
 * A container's root filesystem on an oci node, from the image in the node's layout to a mounted
 * root (what an oci pod start spends on its image, without runc and the network), and the disk it
 * takes, for three ways of doing it, interleaved in each round on fresh data directories:
 *
 *   layers   each layer unpacked once per diff_id, the root an overlay of the layers (the node's way)
 *   whole    the image unpacked whole once per manifest digest, the root an overlay on it (the node's
 *            way before layers: commit 6abe7ec^)
 *   copy     the image unpacked whole once, the root a copy of it (the node's fallback where
 *            overlayfs does not stack layers)
 *
 * --images function images (examples/hello, each bundle a little different, so they share the
 * runtime layer as deploys of different functions do), then --pods containers of the first image.
 * Measures: the first container of the first image (cold: unpack + mount), the first container of
 * each other image (a new deploy: only its own layer is new), each further container of one image
 * (warm: the mount or the copy), and the disk used in the end (`du`, hard links once).
 *
 *   npm run build && sudo node bench/cluster-api/layers.mjs [--rounds 3] [--images 4] [--pods 20]
 *
 * Needs root (mount). Prints a table; asserts nothing.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { ImageStore } from '../../packages/cluster-api/dist/node/runtime/image-store.js';
import { mountRootfs, unmountRootfs } from '../../packages/cluster-api/dist/node/runtime/oci/rootfs.js';
import { functionImage } from '../lib/function-image.mjs';
import { median } from '../lib/stats.mjs';

const run = promisify(execFile);
const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, images: { type: 'string', default: '4' }, pods: { type: 'string', default: '20' } } });
const [rounds, images, pods] = [Number(args.rounds), Number(args.images), Number(args.pods)];
const repo = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'bench-layers-'));
const layout = join(work, 'images');
const ms = (n) => `${Math.round(n)} ms`;
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const tags = [];
for (let i = 0; i < images; i++) {
  const source = join(work, `fn-${i}`);
  cpSync(join(repo, 'examples/hello'), source, { recursive: true });
  writeFileSync(join(source, 'variant.txt'), `function ${i}\n`);
  await functionImage(source, layout, `fn${i}:bench`, work);
  tags.push(`fn${i}:bench`);
}

/** The node's way before layers: an overlay whose one lower layer is the image unpacked whole. */
async function mountWhole(root, bundle) {
  for (const d of ['rootfs', 'upper', 'work']) mkdirSync(join(bundle, d), { recursive: true });
  await run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${root},upperdir=${join(bundle, 'upper')},workdir=${join(bundle, 'work')}`, join(bundle, 'rootfs')]);
}

const ways = {
  layers: { overlay: true, mount: async (store, ref, bundle) => mountRootfs(await store.rootfsImage(ref), bundle) },
  whole: { overlay: false, mount: async (store, ref, bundle) => mountWhole((await store.unpackedImage(ref)).root, bundle) },
  copy: { overlay: false, mount: async (store, ref, bundle) => mountRootfs(await store.rootfsImage(ref), bundle) },
};
const results = Object.fromEntries(Object.keys(ways).map((w) => [w, { cold: [], deploy: [], warm: [], disk: [] }]));

async function once(name, round) {
  const way = ways[name];
  const dir = join(work, `${name}-${round}`);
  const store = new ImageStore({ layout, rootfs: join(dir, 'rootfs'), layers: join(dir, 'layers'), overlay: way.overlay });
  const bundles = [];
  const container = async (ref) => {
    const bundle = join(dir, 'containers', String(bundles.length));
    mkdirSync(bundle, { recursive: true });
    bundles.push(bundle);
    const t = performance.now();
    await way.mount(store, ref, bundle);
    return performance.now() - t;
  };
  try {
    const r = results[name];
    r.cold.push(await container(tags[0]));
    for (const tag of tags.slice(1)) r.deploy.push(await container(tag));
    for (let i = 1; i < pods; i++) r.warm.push(await container(tags[0]));
    // -x: not into the mounted roots (their files are the layers' and the upper layers', counted there).
    const { stdout } = await run('du', ['-skx', '--total', ...['layers', 'rootfs', 'containers'].map((d) => join(dir, d)).filter((p) => existsSync(p))]);
    r.disk.push(Number(/(\d+)\s+total/.exec(stdout)?.[1]) / 1024);
  } finally {
    for (const b of bundles) await unmountRootfs(b);
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  const before = load();
  for (let round = 0; round < rounds; round++) for (const name of Object.keys(ways)) await once(name, round);
  console.log(`\n## Container roots: layers vs whole images (${new Date().toISOString()}, load average ${before} before, ${load()} after; ${rounds} rounds, ${images} function images, ${pods} containers of one)\n`);
  console.log('| measure | layers | whole (before) | copy (fallback) |');
  console.log('|---|--:|--:|--:|');
  const row = (what, key, fmt = ms) => console.log(`| ${what} | ${Object.keys(ways).map((w) => fmt(median(results[w][key]))).join(' | ')} |`);
  row('first container of the first image (unpack + root), median of rounds', 'cold');
  row(`first container of each other image (a new deploy sharing the runtime layer), median of ${rounds * (images - 1)}`, 'deploy');
  row(`each further container of one image, median of ${rounds * (pods - 1)}`, 'warm');
  row(`disk: ${images} images unpacked + ${images + pods - 1} containers' roots`, 'disk', (mb) => `${mb.toFixed(1)} MiB`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
