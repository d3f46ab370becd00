/**
 * Unpacking: whiteouts as the image-spec defines them, and every way a crafted layer could reach
 * outside the target directory (or create a device) refused, with nothing written outside and the
 * half-unpacked directory removed.
 */
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { DigestMismatchError, ImageLayout, resolveImage, unpackImage, unpackLayer, UnsafeArchiveError } from '../src/index.js';
import { imageFromTars, type RawEntry, rawTar } from './crafted.js';
import { readTree } from './tree.js';

let work: string;
let layout: ImageLayout;
let outside: string;
let n = 0;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'oci-unpack-'));
  layout = await ImageLayout.open(join(work, 'layout'));
  outside = join(work, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret'), 'do not touch');
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function unpack(...layers: RawEntry[][]): Promise<string> {
  const tag = `t${++n}`;
  await imageFromTars(layout, tag, layers.map(rawTar));
  const dest = join(work, 'roots', tag);
  await unpackImage(layout, tag, dest);
  return dest;
}

describe('unpackImage', () => {
  it('applies layers in order with whiteouts and opaque directories hiding only lower layers', async () => {
    const dest = await unpack(
      [{ name: 'a/', type: '5', mode: 0o755 }, { name: 'a/x', data: 'x1' }, { name: 'a/y', data: 'y1' }, { name: 'b/', type: '5' }, { name: 'b/z', data: 'z1' }, { name: 'c/', type: '5' }, { name: 'c/deep', data: 'd' }, { name: 'run.sh', data: '#!/bin/sh', mode: 0o755 }],
      [{ name: 'a/.wh.x' }, { name: 'b/new', data: 'new' }, { name: 'b/.wh..wh..opq' }, { name: '.wh.c' }, { name: 'a/y', data: 'y2' }, { name: 'link', type: '2', linkname: 'a/y' }, { name: 'hard', type: '1', linkname: 'run.sh' }],
    );
    expect(readTree(dest)).toEqual({ a: 'dir', 'a/y': 'y2', b: 'dir', 'b/new': 'new', hard: '#!/bin/sh', link: '-> a/y', 'run.sh': '#!/bin/sh' });
    expect(statSync(join(dest, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(statSync(join(dest, 'hard')).ino).toBe(statSync(join(dest, 'run.sh')).ino);
  });

  it.each<[string, RawEntry[][], RegExp]>([
    ['an absolute path', [[{ name: '/etc/evil', data: 'x' }]], /absolute path/],
    ['a .. path', [[{ name: '../outside/evil', data: 'x' }]], /contains \.\./],
    ['a .. inside a path', [[{ name: 'a/../../outside/evil', data: 'x' }]], /contains \.\./],
    ['a symlink that climbs out', [[{ name: 'esc', type: '2', linkname: '../../outside' }]], /points outside the image root/],
    ['a symlink that climbs out through another symlink', [[{ name: 'd/', type: '5' }, { name: 'd/up', type: '2', linkname: '..' }, { name: 'd/up/up2', type: '2', linkname: '..' }]], /points outside the image root/],
    ['a file written through a symlink to the parent of the root', [[{ name: 'up', type: '2', linkname: '.' }, { name: 'loop', type: '2', linkname: 'up/../..' }], [{ name: 'loop/evil', data: 'x' }]], /outside the image root/],
    ['a hardlink to an absolute path', [[{ name: 'h', type: '1', linkname: '/etc/passwd' }]], /absolute path/],
    ['a hardlink out of the root', [[{ name: 'h', type: '1', linkname: '../outside/secret' }]], /contains \.\./],
    ['a hardlink through an absolute symlink', [[{ name: 'host', type: '2', linkname: '/etc' }, { name: 'h', type: '1', linkname: 'host/passwd' }]], /not a file inside the image/],
    ['a symlink loop', [[{ name: 'etc', type: '2', linkname: '/etc' }, { name: 'etc/passwd', data: 'x' }]], /too many levels of symlinks/],
    ['a character device', [[{ name: 'null', type: '3' }]], /a char device/],
    ['a block device', [[{ name: 'sda', type: '4' }]], /a block device/],
    ['a fifo', [[{ name: 'pipe', type: '6' }]], /a fifo device/],
    ['a whiteout of ..', [[{ name: 'a/', type: '5' }, { name: 'a/f', data: 'x' }], [{ name: 'a/.wh...' }]], /whiteout "a\/\.wh\.\.\." in a layer: it names no single entry/],
    ['a whiteout of .', [[{ name: 'a/', type: '5' }], [{ name: 'a/.wh..' }]], /names no single entry/],
    ['a whiteout of nothing', [[{ name: 'f', data: 'x' }], [{ name: '.wh.' }]], /names no single entry/],
    ['a whiteout of a whiteout', [[{ name: 'f', data: 'x' }], [{ name: '.wh..wh.f' }]], /names no single entry/],
  ])('refuses %s and leaves nothing behind', async (_what, layers, message) => {
    const tag = `bad${++n}`;
    await imageFromTars(layout, tag, layers.map(rawTar));
    const dest = join(work, 'roots', tag);
    const err = await unpackImage(layout, tag, dest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeArchiveError);
    expect((err as Error).message).toMatch(message);
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(outside)).toEqual(['secret']);
    expect(statSync('/etc/passwd').nlink).toBe(1);
  });

  it('keeps a write through an absolute symlink inside the root, as a chroot would', async () => {
    const dest = await unpack([{ name: 'out', type: '2', linkname: outside }], [{ name: 'out/planted', data: 'x' }]);
    expect(readdirSync(outside)).toEqual(['secret']);
    expect(readTree(dest)[`${outside.slice(1)}/planted`]).toBe('x');
  });

  it('refuses a layer whose bytes do not match its digest, and a non-empty target', async () => {
    const [digest] = await imageFromTars(layout, 'corrupt', [rawTar([{ name: 'f', data: 'original' }])]);
    writeFileSync(layout.blobPath(digest!), Buffer.from('not the layer'));
    const dest = join(work, 'roots', 'corrupt');
    const err = await unpackImage(layout, 'corrupt', dest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(existsSync(dest)).toBe(false);
    const [digest2] = await imageFromTars(layout, 'swapped', [rawTar([{ name: 'f', data: 'one' }])]);
    const other = await layout.writeBlob((await import('node:zlib')).gzipSync(rawTar([{ name: 'f', data: 'two' }])));
    writeFileSync(layout.blobPath(digest2!), (await layout.readBlob(other.digest)));
    await expect(unpackImage(layout, 'swapped', join(work, 'roots', 'swapped'))).rejects.toBeInstanceOf(DigestMismatchError);
    const full = join(work, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'x'), '');
    await expect(unpackImage(layout, 't1', full)).rejects.toThrow(/not empty/);
  });
});

const which = (cmd: string) => ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].some((d) => existsSync(join(d, cmd)));
const overlayMarksMissing = process.getuid?.() !== 0 ? 'not root' : !which('setfattr') ? 'no setfattr (Debian attr)' : !which('getfattr') ? 'no getfattr' : undefined;

describe.skipIf(overlayMarksMissing)(`unpackLayer (one layer as an overlayfs lower layer)${overlayMarksMissing ? ` (skipped: ${overlayMarksMissing})` : ''}`, () => {
  const layerOf = async (entries: RawEntry[]) => {
    const tag = `layer${++n}`;
    await imageFromTars(layout, tag, [rawTar(entries)]);
    const { manifest, config } = await resolveImage(layout, tag);
    return { layer: manifest.layers[0]!, diffId: config.rootfs.diff_ids[0], dest: join(work, 'layers', tag) };
  };

  it('turns .wh.<name> into a 0/0 character device and .wh..wh..opq into trusted.overlay.opaque=y; a whiteout of an entry of the same layer is dropped', async () => {
    const { layer, diffId, dest } = await layerOf([
      { name: 'a/.wh.x' }, { name: 'b/.wh..wh..opq' }, { name: 'b/new', data: 'new' }, { name: '.wh.c' }, { name: 'd/', type: '5', mode: 0o1777 }, { name: 'd/.wh.kept' }, { name: 'd/kept', data: 'mine' },
    ]);
    await unpackLayer(layout, layer, diffId, dest);
    for (const hidden of ['a/x', 'c']) {
      const st = lstatSync(join(dest, hidden));
      expect([st.isCharacterDevice(), st.rdev]).toEqual([true, 0]);
    }
    expect(execFileSync('getfattr', ['--absolute-names', '--only-values', '-n', 'trusted.overlay.opaque', join(dest, 'b')], { encoding: 'utf8' })).toBe('y');
    expect(() => execFileSync('getfattr', ['--absolute-names', '-n', 'trusted.overlay.opaque', join(dest, 'a')], { stdio: 'pipe' })).toThrow();
    expect(readFileSync(join(dest, 'b', 'new'), 'utf8')).toBe('new');
    expect(readFileSync(join(dest, 'd', 'kept'), 'utf8')).toBe('mine');
    expect(statSync(join(dest, 'd')).mode & 0o7777).toBe(0o1777);
    expect(readdirSync(join(dest, 'b'))).toEqual(['new']);
  });

  it.each<[string, RawEntry[], RegExp]>([
    ['a traversal entry', [{ name: '../outside/evil', data: 'x' }], /contains \.\./],
    ['a whiteout of ..', [{ name: 'a/.wh...' }], /names no single entry/],
    ['a symlink out of the root', [{ name: 'up', type: '2', linkname: '../..' }], /points outside the image root/],
  ])('refuses %s and leaves nothing behind', async (_what, entries, message) => {
    const { layer, diffId, dest } = await layerOf(entries);
    const err = await unpackLayer(layout, layer, diffId, dest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeArchiveError);
    expect((err as Error).message).toMatch(message);
    expect(existsSync(dest)).toBe(false);
    expect(readdirSync(outside)).toEqual(['secret']);
  });
});
