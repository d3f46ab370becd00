/**
 * The container entrypoint without a container engine: the image's /app is rebuilt in a temp
 * directory (the bundle from `func-runtime build`, func.yaml, package.json; no node_modules) and
 * the exact CMD of the templates' Containerfile runs as a process the way the image runs it — an
 * unprivileged user that can write only to its TMPDIR, PORT set by the platform, SIGTERM to stop.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, copyFixture, freePort, spawnCli, text, until } from './dev-helpers.js';

const TEMPLATES = new URL('../../templates/', import.meta.url).pathname;
const containerfiles = existsSync(TEMPLATES)
  ? readdirSync(TEMPLATES).map((t) => join(TEMPLATES, t, 'Containerfile')).filter((f) => existsSync(f))
  : [];

/** The CMD of the first template (exec form), or the runtime's documented default. */
function imageCmd(): string[] {
  const file = containerfiles[0];
  const line = file ? /^CMD\s+(\[.*\])\s*$/m.exec(readFileSync(file, 'utf8'))?.[1] : undefined;
  return line ? (JSON.parse(line) as string[]) : ['func-runtime', '.'];
}

// Root ignores file modes, so the image's unprivileged user is played by `nobody`.
const asRoot = process.getuid?.() === 0;
const USER = { uid: 65534, gid: 65534 };

let root: string;
let app: string;
let bin: string;
let scratch: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'func-image-'));
  const source = copyFixture('dev-entrypoint');
  const built = spawnCli(['build', source.dir, '--outdir', join(root, 'dist-build')]);
  expect(await built.exited).toBe(0);
  // The runtime stage: what the Containerfile copies into /app, and nothing else.
  app = join(root, 'app');
  mkdirSync(app);
  cpSync(join(root, 'dist-build'), join(app, 'dist'), { recursive: true });
  cpSync(join(source.dir, 'func.yaml'), join(app, 'func.yaml'));
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fn', private: true, main: 'dist/index.mjs' }));
  source.remove();
  bin = join(root, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'func-runtime'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
  chmodSync(join(bin, 'func-runtime'), 0o755);
  for (const dir of [root, app, bin, join(app, 'dist')]) chmodSync(dir, 0o755);
  if (!asRoot) chmodSync(app, 0o555);
});
afterAll(() => {
  if (!asRoot) chmodSync(app, 0o755);
  rmSync(root, { recursive: true, force: true });
});

let child: ChildProcess | undefined;
afterEach(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  child = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function freshTmp(): string {
  scratch = mkdtempSync(join(tmpdir(), 'func-image-tmp-'));
  if (asRoot) chownSync(scratch, USER.uid, USER.gid);
  return scratch;
}

/** Every path under dir with size and mtime: equal snapshots mean nothing was written. */
function snapshot(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: false }).map(String).sort().map((p) => {
    const s = statSync(join(dir, p));
    return `${p} ${s.size} ${s.mtimeMs}`;
  });
}

interface Image {
  child: ChildProcess;
  url: string;
  output(): string;
  exited: Promise<number | null>;
}

function runImage(env: Record<string, string>, cmd = imageCmd()): Image {
  const tmp = freshTmp();
  const proc = spawn(cmd[0]!, cmd.slice(1), {
    cwd: app,
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: '/nonexistent', TMPDIR: tmp, NODE_ENV: 'production', ...env },
    ...(asRoot ? USER : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d));
  proc.stderr!.on('data', (d: Buffer) => (out += d));
  const exited = once(proc, 'exit').then(([code]) => code as number | null);
  return { child: proc, url: `http://127.0.0.1:${env.PORT}`, output: () => out, exited };
}

const marks = (): string[] => (existsSync(join(scratch, 'marks.log')) ? readFileSync(join(scratch, 'marks.log'), 'utf8').trim().split('\n') : []);

describe('the container entrypoint (CMD as a process)', () => {
  it('the sandbox is real: the image user cannot write to /app', () => {
    const probe = spawnSync(process.execPath, ['-e', "require('fs').writeFileSync('probe', 'x')"], { cwd: app, ...(asRoot ? USER : {}), encoding: 'utf8' });
    expect(probe.status).not.toBe(0);
    expect(probe.stderr).toMatch(/EACCES|EROFS|EPERM/);
  });

  it('serves on PORT; on SIGTERM turns new requests away, completes the in-flight one, runs shutdown, exits 0; writes nothing outside TMPDIR', async () => {
    const before = snapshot(app);
    const image = runImage({ PORT: String(await freePort()) });
    expect(await until('the image to answer on PORT', () => text(`${image.url}/`))).toBe('done after 0 ms');
    const slow = fetch(`${image.url}/?wait=3000`).then(async (r) => ({ status: r.status, body: await r.text() }), (err: Error) => err.message);
    await until('the request to be in flight', () => (marks().includes('request') ? true : undefined));
    image.child.kill('SIGTERM');
    // Readiness says 503, or the listener is already closed: either way the platform stops routing here.
    const turnedAway = await until('new requests to be turned away', () =>
      fetch(`${image.url}/health/readiness`, { headers: { connection: 'close' } }).then((r) => (r.status === 503 ? 503 : undefined), () => 'refused'));
    expect([503, 'refused']).toContain(turnedAway);
    expect(await slow).toEqual({ status: 200, body: 'done after 3000 ms' });
    expect(await image.exited).toBe(0);
    expect(marks()).toEqual(['request', 'shutdown']);
    expect(snapshot(app)).toEqual(before);
    expect(image.output()).not.toMatch(/EACCES|EROFS|error/i);
  });

  it.each([
    ['a PORT that is not a number', { PORT: 'http' }, /PORT must be an integer/],
    ['a PORT out of range', { PORT: '70000' }, /PORT must be a port number 0–65535/],
  ])('%s: one clear line, exit 1', async (_name, env, message) => {
    const image = runImage(env);
    expect(await image.exited).toBe(1);
    expect(image.output()).toMatch(message);
  });

  it('a function that cannot load: exit 1 naming the file', async () => {
    const image = runImage({ PORT: String(await freePort()) }, [imageCmd()[0]!, 'dist/missing.mjs']);
    expect(await image.exited).toBe(1);
    expect(image.output()).toMatch(/No function at .*dist\/missing\.mjs/);
  });
});

/** The templates' Containerfiles, linted for the shape the entrypoint relies on. */
describe.runIf(containerfiles.length > 0)('template Containerfile shape', () => {
  const rules: [string, (text: string) => boolean][] = [
    ['is multi-stage (a build stage and a runtime stage)', (t) => (t.match(/^FROM\s/gm) ?? []).length >= 2],
    ['installs exactly the lock file with npm ci', (t) => /^RUN\s.*\bnpm ci\b/m.test(t)],
    ['runs as a non-root USER', (t) => { const u = /^USER\s+(\S+)/gm.exec(t)?.[1]; return u !== undefined && !/^(root|0)(:|$)/.test(u); }],
    ['starts func-runtime in exec form (signals reach it)', (t) => /^CMD\s+\[\s*"func-runtime"/m.test(t)],
    ['EXPOSEs and sets PORT 8080', (t) => /^EXPOSE\s+8080\b/m.test(t) && /\bPORT=8080\b/.test(t)],
  ];
  it.each(containerfiles.flatMap((f) => rules.map(([name, check]) => [f.slice(TEMPLATES.length), name, check] as const)))('%s %s', (file, _name, check) => {
    expect(check(readFileSync(join(TEMPLATES, file), 'utf8'))).toBe(true);
  });

  it.each(containerfiles.map((f) => f.slice(TEMPLATES.length)))('%s has a .dockerignore that keeps node_modules and .env out', (file) => {
    const ignore = readFileSync(join(TEMPLATES, file, '../.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    expect(ignore).toEqual(expect.arrayContaining(['node_modules', '.env']));
  });

  // The image must start from the production bundle: its cold start is what a deployment pays.
  it.each(containerfiles.map((f) => f.slice(TEMPLATES.length)))('%s builds the production bundle with func-runtime build', (file) => {
    expect(readFileSync(join(TEMPLATES, file), 'utf8')).toMatch(/^RUN\s.*func-runtime build\b/m);
  });
});
