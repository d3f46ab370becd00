/**
 * `func-runtime build` end to end: bundle a TypeScript function with an ESM and a CommonJS
 * dependency, delete node_modules, and serve the bundle with `func-runtime dist/`.
 */
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFixture, freePort, killAll, spawnCli, text, until } from './dev-helpers.js';
import { STEP_LINE } from '../src/deploy/progress.js';

const cleanups: (() => void)[] = [];
afterEach(async () => {
  await killAll();
  for (const c of cleanups.splice(0)) c();
});

/** The dev-build fixture with its dependencies installed (fixture packages stand in for npm's). */
function project(): string {
  const fx = copyFixture('dev-build');
  cleanups.push(fx.remove);
  cpSync(join(fx.dir, 'deps'), join(fx.dir, 'node_modules'), { recursive: true });
  return fx.dir;
}

async function build(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(['build', ...args], { cwd });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

describe('func-runtime build', () => {
  it('bundles function and dependencies; the bundle serves with node_modules removed', async () => {
    const dir = project();
    const { code, output } = await build(['.'], dir);
    expect(output).toMatch(/built dist\/index\.mjs \([\d.]+ KiB\) in \d+ ms/);
    expect(code).toBe(0);
    for (const f of ['index.mjs', 'index.mjs.map', 'package.json', 'func.yaml']) expect(existsSync(join(dir, 'dist', f))).toBe(true);
    const map = JSON.parse(readFileSync(join(dir, 'dist/index.mjs.map'), 'utf8')) as { sources: string[] };
    expect(map.sources).toEqual(expect.arrayContaining(['../src/index.ts', '../src/shout.ts', '../node_modules/legacy-cjs/index.js', '../node_modules/legacy-cjs/lib/label.js']));

    rmSync(join(dir, 'node_modules'), { recursive: true });
    rmSync(join(dir, 'src'), { recursive: true });
    const port = await freePort();
    const served = spawnCli(['dist/'], { cwd: dir, env: { ...process.env, PORT: String(port) } });
    const body = await until('the bundle to answer', () => text(`http://127.0.0.1:${port}/?name=image`));
    expect(JSON.parse(body)).toEqual({ greeting: 'HELLO IMAGE!', legacy: 'cjs string .mjs', platform: 'string' });
    // func.yaml travels with the bundle: its custom liveness path is served.
    expect((await fetch(`http://127.0.0.1:${port}/alive`)).status).toBe(200);
    expect(await served.stop()).toBe(0);
  });

  it('writes to --outdir, and keeps native addons external and named', async () => {
    const dir = project();
    const { code, output } = await build(['src/native.ts', '--outdir', 'out'], dir);
    expect(code).toBe(0);
    expect(output).toMatch(/native addons left out of the bundle, install them next to it: fake-addon/);
    const bundle = readFileSync(join(dir, 'out/index.mjs'), 'utf8');
    expect(bundle).toMatch(/__funcRequire\("fake-addon"\)|from"fake-addon"|from "fake-addon"/);
    expect(bundle).not.toContain("kind: 'native'");
    // The external addon is installed here, so the bundle runs and loads it from node_modules.
    const port = await freePort();
    spawnCli(['out'], { cwd: dir, env: { ...process.env, PORT: String(port) } });
    expect(await until('the native bundle to answer', () => text(`http://127.0.0.1:${port}/`))).toBe('native');
  });

  it.each([
    ['a syntax error', ['src/broken.ts', '--outdir', 'out'], /Cannot bundle .*broken\.ts: broken\.ts:2:\d+: Unterminated string literal\. Fix it/],
    ['a missing dependency', ['src/index.ts', '--outdir', 'out'], /Cannot bundle .*index\.ts: index\.ts:2:\d+: Could not resolve "greeter-esm"/],
    ['an output directory that holds the sources', ['.', '--outdir', '.'], /holds the function's own files .*would overwrite them/],
    ['a path that does not exist', ['nowhere'], /No function at .*nowhere: the path does not exist/],
  ])('fails on %s with one clear line and exit 1', async (name, args, message) => {
    const dir = project();
    if (name === 'a missing dependency') rmSync(join(dir, 'node_modules'), { recursive: true });
    const before = readFileSync(join(dir, 'package.json'), 'utf8');
    const { code, output } = await build(args, dir);
    expect(code).toBe(1);
    expect(output).toMatch(message);
    // A step that took over a second (a loaded machine) has its progress line; the error is one line.
    expect(output.trim().split('\n').filter((l) => !STEP_LINE.test(l))).toHaveLength(1);
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(before);
  });

  it('a bundle whose module throws at load fails to start with the reason', async () => {
    const dir = project();
    writeFileSync(join(dir, 'src/index.ts'), `throw new Error('no config');\nexport const handle = () => 'x';\n`);
    expect((await build(['.'], dir)).code).toBe(0);
    const proc = spawnCli(['dist'], { cwd: dir, env: { ...process.env, PORT: String(await freePort()) } });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(/its top-level code threw Error: no config/);
  });
});
