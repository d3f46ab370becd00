import { readFile, stat, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createProject } from '../src/create.js';
import { CreateError, InterruptedError } from '../src/errors.js';
import type { Plan } from '../src/plan.js';
import { entries, removeTempDirs, fakeRegistry, npmEnv, tempDir } from './helpers.js';

afterAll(removeTempDirs);

const now = new Date('2026-03-04T05:06:07.000Z');

function plan(parent: string, overrides: Partial<Plan> = {}): Plan {
  return { name: 'my-fn', template: 'http', targetDir: join(parent, 'my-fn'), install: false, force: false, deps: 'registry', ...overrides };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('createProject without install', () => {
  it.each(['http', 'cloudevents'] as const)('writes the whole %s project', async (template) => {
    const parent = await tempDir();
    await createProject(plan(parent, { template }), { now });
    const dir = join(parent, 'my-fn');
    expect(await entries(dir)).toEqual(
      ['.dockerignore', '.gitignore', 'Containerfile', 'README.md', 'func.yaml', 'package.json', 'src', 'test', 'tsconfig.json', 'vitest.config.ts'],
    );
    expect(parse(await readFile(join(dir, 'func.yaml'), 'utf8'))).toMatchObject({
      name: 'my-fn',
      created: '2026-03-04T05:06:07.000Z',
      invoke: template === 'http' ? 'http' : 'cloudevent',
    });
    expect(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'))).toMatchObject({ name: 'my-fn' });
    expect(await entries(parent)).toEqual(['my-fn']);
  });

  it('fills an empty directory, keeping the directory itself (it may be the shell\'s working directory)', async () => {
    const parent = await tempDir();
    await mkdir(join(parent, 'my-fn'));
    const before = await stat(join(parent, 'my-fn'));
    await createProject(plan(parent), { now });
    expect(await entries(join(parent, 'my-fn'))).toContain('func.yaml');
    expect((await stat(join(parent, 'my-fn'))).ino).toBe(before.ino);
    expect(await entries(parent)).toEqual(['my-fn']);
  });

  it('creates missing parent directories', async () => {
    const parent = await tempDir();
    await createProject(plan(parent, { targetDir: join(parent, 'a', 'b', 'my-fn') }), { now });
    expect(await entries(join(parent, 'a', 'b'))).toEqual(['my-fn']);
  });

  it('refuses a non-empty directory without --force, touching nothing', async () => {
    const parent = await tempDir();
    await mkdir(join(parent, 'my-fn'));
    await writeFile(join(parent, 'my-fn', 'notes.txt'), 'mine');
    await expect(createProject(plan(parent), { now })).rejects.toThrow(/is not empty: .*--force/);
    expect(await entries(join(parent, 'my-fn'))).toEqual(['notes.txt']);
    expect(await entries(parent)).toEqual(['my-fn']);
  });

  it('refuses a path that is a file', async () => {
    const parent = await tempDir();
    await writeFile(join(parent, 'my-fn'), 'a file');
    await expect(createProject(plan(parent), { now })).rejects.toThrow(/exists and is not a directory/);
    expect(await readFile(join(parent, 'my-fn'), 'utf8')).toBe('a file');
  });

  it('with --force writes into a non-empty directory, replacing same-named files and keeping the rest', async () => {
    const parent = await tempDir();
    const dir = join(parent, 'my-fn');
    await mkdir(dir);
    await writeFile(join(dir, 'notes.txt'), 'mine');
    await writeFile(join(dir, 'README.md'), 'old readme');
    await createProject(plan(parent, { force: true }), { now });
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('mine');
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toMatch(/^# my-fn/);
    expect(await entries(parent)).toEqual(['my-fn']);
  });

  it('does nothing when aborted before it starts', async () => {
    const parent = await tempDir();
    const controller = new AbortController();
    controller.abort(new InterruptedError('SIGINT'));
    await expect(createProject(plan(parent), { now, signal: controller.signal })).rejects.toBeInstanceOf(InterruptedError);
    expect(await entries(parent)).toEqual([]);
  });
});

describe('createProject with install', () => {
  it('leaves nothing behind when npm install fails', async () => {
    const registry = await fakeRegistry('missing');
    cleanups.push(registry.close);
    const parent = await tempDir();
    const env = npmEnv(registry.url, await tempDir('npm-cache-'));

    const run = createProject(plan(parent, { install: true, targetDir: join(parent, 'deep', 'my-fn') }), { now, env });

    await expect(run).rejects.toThrow(CreateError);
    await expect(run).rejects.toThrow(/npm install failed/);
    expect(await entries(parent)).toEqual([]);
  });

  it('stops npm and leaves nothing behind when interrupted during the install', async () => {
    const registry = await fakeRegistry('hang');
    cleanups.push(registry.close);
    const parent = await tempDir();
    const env = npmEnv(registry.url, await tempDir('npm-cache-'));
    const controller = new AbortController();

    const run = createProject(plan(parent, { install: true }), { now, env, signal: controller.signal });
    await registry.requested; // npm is running and waiting on the registry
    expect((await entries(parent)).some((e) => e.startsWith('.my-fn.create-func-'))).toBe(true);
    controller.abort(new InterruptedError('SIGINT'));

    await expect(run).rejects.toBeInstanceOf(InterruptedError);
    expect(await entries(parent)).toEqual([]);
    // npm has exited, not merely been signalled: its connections to the registry are gone.
    await expect.poll(registry.openConnections, { timeout: 5_000 }).toBe(0);
    await expect(stat(join(parent, 'my-fn'))).rejects.toThrow(/ENOENT/);
  });
});
