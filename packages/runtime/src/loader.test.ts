import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LoadError, loadFunction, resolveEntry, toFunctionModule } from './loader.js';

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'func-loader-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

describe('resolveEntry', () => {
  it.each([
    ['package.json main', { 'package.json': '{"main":"lib/fn.js"}', 'lib/fn.js': '', 'index.js': '' }, 'lib/fn.js'],
    ['index.js', { 'index.js': '' }, 'index.js'],
    ['index.mjs', { 'index.mjs': '' }, 'index.mjs'],
    ['index.ts', { 'index.ts': '' }, 'index.ts'],
    ['src/index.ts when main is not built', { 'package.json': '{"main":"build/index.js"}', 'src/index.ts': '' }, 'src/index.ts'],
    ['main that is a directory', { 'package.json': '{"main":"lib"}', 'lib/index.js': '' }, 'lib/index.js'],
  ])('%s', (_name, files, expected) => {
    const dir = project(files);
    expect(resolveEntry(dir)).toEqual({ file: join(dir, expected), dir });
  });

  it('a file path is its own entry', () => {
    const dir = project({ 'fn.cjs': '' });
    expect(resolveEntry(join(dir, 'fn.cjs'))).toEqual({ file: join(dir, 'fn.cjs'), dir });
  });

  it.each([
    [{}, /No function entry found in .*Expected package.json "main"/],
    [{ 'package.json': '{"main":"build/index.js"}' }, /package.json "main" points at build\/index.js, which does not exist/],
    [{ 'package.json': '{not json' }, /package.json is not valid JSON/],
  ])('explains a missing entry %#', (files, message) => {
    expect(() => resolveEntry(project(files))).toThrow(message);
  });
});

describe('toFunctionModule', () => {
  const handle = () => 'x';
  it.each([
    ['a bare function', handle],
    ['named export', { handle }],
    ['default function', { default: handle }],
    ['default Function object', { default: { handle } }],
  ])('accepts %s', (_name, exported) => {
    expect(toFunctionModule(exported).handle).toBe(handle);
  });

  it('keeps the Function object members', () => {
    const init = () => undefined;
    const m = toFunctionModule({ handle, init, logLevel: 'debug', unrelated: 1 });
    expect(m).toMatchObject({ handle, init, logLevel: 'debug' });
    expect(m).not.toHaveProperty('unrelated');
  });

  it.each([
    [{ handle: 'not a function' }, /has no `handle` function \(it exports handle\)/],
    [{}, /it exports nothing/],
    [{ handle, init: 5 }, /exports `init`, but it is a number, not a function/],
  ])('rejects %j', (exported, message) => {
    expect(() => toFunctionModule(exported, 'fn.js')).toThrow(LoadError);
    expect(() => toFunctionModule(exported, 'fn.js')).toThrow(message);
  });
});

describe('loadFunction', () => {
  it('loads CommonJS module.exports = fn and ESM named exports', async () => {
    const dir = project({ 'a.cjs': 'module.exports = () => "cjs";', 'b.mjs': 'export function handle() { return "esm"; }\nexport const logLevel = "error";' });
    expect((await loadFunction({ file: join(dir, 'a.cjs'), dir })).handle({} as never)).toBe('cjs');
    const b = await loadFunction({ file: join(dir, 'b.mjs'), dir });
    expect([b.handle({} as never), b.logLevel]).toEqual(['esm', 'error']);
  });

  it('names the file and the fix when top-level code throws', async () => {
    const dir = project({ 'c.mjs': 'throw new Error("no DATABASE_URL");\nexport const handle = () => 1;' });
    await expect(loadFunction({ file: join(dir, 'c.mjs'), dir })).rejects.toThrow(/Cannot load .*c\.mjs: its top-level code threw Error: no DATABASE_URL.*Fix the module/);
  });
});
