/**
 * Function images end to end: a real `func-runtime build` bundle and the real runtime package with
 * its production dependencies → an image whose runtime layer is shared across functions, which
 * skopeo reads, and which, unpacked, runs as a process and answers HTTP.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFunctionImage, FUNCTION_IMAGE_LABEL, ImageLayout, nodePackageEntries, type RuntimeLayer, unpackImage } from '../src/index.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../../../', import.meta.url));
const runtimeCli = join(repo, 'packages/runtime/dist/cli.js');
let work: string;
let runtime: RuntimeLayer;
const children: ChildProcess[] = [];

/** The runtime package as it would ship: compiled code and production dependencies, no sources or tests. */
const excludeSources = (rel: string, pkg: string) => pkg === '@func/runtime' && (/^(src|test|scripts)(\/|$)/.test(rel) || rel.endsWith('.tsbuildinfo') || /\.test\.(js|d\.ts|js\.map|d\.ts\.map)$/.test(rel));

async function bundle(example: string): Promise<string> {
  const out = join(work, `bundle-${example}`);
  await run(process.execPath, [runtimeCli, 'build', join(repo, 'examples', example), '--outdir', out]);
  return out;
}

const freePort = () => new Promise<number>((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as { port: number };
    s.close(() => resolve(port));
  });
});

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'oci-fn-'));
  runtime = { entries: await nodePackageEntries('@func/runtime', repo, { exclude: excludeSources }), cli: 'node_modules/@func/runtime/dist/cli.js' };
}, 60_000);
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

describe('buildFunctionImage', () => {
  it('builds a function image: runtime layer then bundle layer, entrypoint, env, port and labels', async () => {
    const layout = await ImageLayout.open(join(work, 'layout'));
    const image = await buildFunctionImage(layout, { bundleDir: await bundle('hello'), runtime, name: 'hello', tag: 'hello' });
    expect(image.manifest.layers).toHaveLength(2);
    expect(image.config.config).toEqual({
      Entrypoint: ['node', '/func/runtime/node_modules/@func/runtime/dist/cli.js'],
      Cmd: ['/func/app'],
      WorkingDir: '/func/app',
      Env: ['NODE_ENV=production', 'PORT=8080'],
      ExposedPorts: { '8080/tcp': {} },
      Labels: {
        [FUNCTION_IMAGE_LABEL]: 'function',
        'dev.func.runtime.cli': '/func/runtime/node_modules/@func/runtime/dist/cli.js',
        'dev.func.bundle': '/func/app',
        'function.knative.dev/name': 'hello',
        'function.knative.dev/runtime': 'typescript',
        'org.opencontainers.image.title': 'hello',
      },
    });
    const inspect = JSON.parse((await run('skopeo', ['--insecure-policy', 'inspect', `oci:${layout.dir}:hello`])).stdout);
    expect(inspect.Labels['dev.func.image']).toBe('function');
  });

  it('shares the runtime layer between functions and gives the same digest for the same inputs', async () => {
    const layout = await ImageLayout.open(join(work, 'shared'));
    const hello = await buildFunctionImage(layout, { bundleDir: await bundle('hello'), runtime, name: 'hello' });
    const again = await buildFunctionImage(await ImageLayout.open(join(work, 'shared-2')), { bundleDir: join(work, 'bundle-hello'), runtime, name: 'hello' });
    const other = await buildFunctionImage(layout, { bundleDir: await bundle('json-api'), runtime, name: 'json-api' });
    expect(again.digest).toBe(hello.digest);
    expect(other.manifest.layers[0]!.digest).toBe(hello.manifest.layers[0]!.digest);
    expect(other.manifest.layers[1]!.digest).not.toBe(hello.manifest.layers[1]!.digest);
  });

  it('puts files for one Node.js (runtime.codeCache) in a layer of their own between the runtime and the function', async () => {
    const layout = await ImageLayout.open(join(work, 'code-cache'));
    const codeCache = { node: 'v0.0.1-test', entries: [{ path: 'cache.bin', type: 'file' as const, mode: 0o644, data: Buffer.from('compiled') }] };
    const plain = await buildFunctionImage(layout, { bundleDir: await bundle('hello'), runtime, name: 'hello' });
    const cached = await buildFunctionImage(layout, { bundleDir: join(work, 'bundle-hello'), runtime: { ...runtime, codeCache }, name: 'hello', tag: 'cached' });
    expect(cached.manifest.layers).toHaveLength(3);
    expect(cached.manifest.layers[0]!.digest).toBe(plain.manifest.layers[0]!.digest);
    expect(cached.manifest.layers[2]!.digest).toBe(plain.manifest.layers[1]!.digest);
    expect(cached.config.history!.map((h) => h.created_by)).toEqual(['func-runtime: runtime (/func/runtime)', 'func-runtime: code cache for Node.js v0.0.1-test (/func/runtime)', 'func-runtime: function hello (/func/app)']);
    const root = join(work, 'rootfs-code-cache');
    await unpackImage(layout, 'cached', root);
    expect(readFileSync(join(root, 'func/runtime/cache.bin'), 'utf8')).toBe('compiled');
    expect(readFileSync(join(root, 'func/runtime/node_modules/@func/runtime/package.json'), 'utf8')).toContain('"name": "@func/runtime"');
  });

  it('unpacks to a directory from which the runtime serves the function as a process', async () => {
    const layout = await ImageLayout.open(join(work, 'layout'));
    const root = join(work, 'rootfs');
    const config = await unpackImage(layout, 'hello', root);
    const [, cli] = config.config!.Entrypoint!;
    const port = await freePort();
    const child = spawn(process.execPath, [join(root, cli!), join(root, config.config!.Cmd![0]!)], { env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: String(port) }, stdio: 'ignore' });
    children.push(child);
    let answer = '';
    for (let i = 0; i < 200 && !answer; i++) {
      answer = await fetch(`http://127.0.0.1:${port}/?name=image`).then((r) => r.text(), () => '');
      if (!answer) await new Promise((r) => setTimeout(r, 50));
    }
    expect(answer).toBe('Hello, image!\n');
    child.kill('SIGTERM');
  });

  it('refuses a directory that is not a build output, and a runtime CLI outside the layer', async () => {
    const layout = await ImageLayout.open(join(work, 'bad'));
    await expect(buildFunctionImage(layout, { bundleDir: work, runtime, name: 'x' })).rejects.toThrow(/is not a func-runtime build output \(no package.json with "main"\)/);
    const broken = mkdtempSync(join(work, 'broken-'));
    writeFileSync(join(broken, 'package.json'), '{"main":"index.mjs"}');
    await expect(buildFunctionImage(layout, { bundleDir: broken, runtime, name: 'x' })).rejects.toThrow(/names "index.mjs" as main, but that file is missing/);
    await expect(buildFunctionImage(layout, { bundleDir: join(work, 'bundle-hello'), runtime: { ...runtime, cli: '../../bin/sh' }, name: 'x' })).rejects.toThrow(/runtime.cli must be a path inside the runtime layer/);
  });
});
