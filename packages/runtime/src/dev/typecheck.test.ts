import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTypeCheck, formatDiagnostics, parseDiagnostics, ShownDiagnostics, typeCheck, type TypeCheck } from './typecheck.js';

const work = mkdtempSync(join(tmpdir(), 'typecheck-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const typescript = dirname(dirname(createRequire(import.meta.url).resolve('typescript/package.json')));

let n = 0;
/** A TypeScript project: its tsconfig, its sources, TypeScript installed (a link to the workspace's) unless told otherwise. */
function project(files: Record<string, string>, options: { tsconfig?: boolean; typescript?: boolean } = {}): string {
  const dir = join(work, `p${n++}`);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"p","type":"module"}');
  if (options.tsconfig !== false) writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', skipLibCheck: true, types: [] }, include: ['*.ts'] }));
  if (options.typescript !== false) symlinkSync(join(typescript, 'typescript'), join(dir, 'node_modules', 'typescript'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('typeCheck', () => {
  it('passes a project without type errors, with the project\'s own tsc', async () => {
    expect(await typeCheck(project({ 'index.ts': 'export const handle = (n: number): number => n * 2;\n' }))).toEqual({ status: 'passed' });
  });

  it('finds type errors and names file, line and code', async () => {
    const check = await typeCheck(project({ 'index.ts': 'export const handle = (n: number): string => n * 2;\nconst x: boolean = "no";\n' }));
    expect(check.status).toBe('failed');
    const failed = check as Extract<TypeCheck, { status: 'failed' }>;
    expect(failed.count).toBe(2);
    expect(failed.diagnostics[0]).toMatch(/index\.ts\(1,\d+\): error TS2322: Type 'number' is not assignable to type 'string'/);
    expect(formatDiagnostics(failed)).toContain('index.ts(2,');
  });

  it('checks again incrementally: a fixed error is gone on the next run', async () => {
    const dir = project({ 'index.ts': 'export const x: number = "a";\n' });
    expect((await typeCheck(dir)).status).toBe('failed');
    writeFileSync(join(dir, 'index.ts'), 'export const x: number = 1;\n');
    expect((await typeCheck(dir)).status).toBe('passed');
  });

  it('is nothing to do without a tsconfig.json, and skipped (saying why) without TypeScript installed', async () => {
    expect(await typeCheck(project({ 'index.js': 'export const handle = () => 1;\n' }, { tsconfig: false }))).toEqual({ status: 'none' });
    const skipped = await typeCheck(project({ 'index.ts': 'export const x: number = "a";\n' }, { typescript: false }));
    expect(skipped).toMatchObject({ status: 'skipped', reason: expect.stringContaining('typescript is not installed') });
  });

  it('reports a broken tsconfig.json as a failure, not a pass', async () => {
    const dir = project({ 'index.ts': 'export const x = 1;\n' });
    writeFileSync(join(dir, 'tsconfig.json'), '{ "compilerOptions": { "strict": "very" } }');
    const check = await typeCheck(dir);
    expect(check.status).toBe('failed');
  });
});

describe('diagnostics', () => {
  it('keeps continuation lines with their diagnostic and tolerates any text', () => {
    expect(parseDiagnostics('a.ts(1,2): error TS1: one\n  more about one\nb.ts(3,4): error TS2: two\n')).toEqual(['a.ts(1,2): error TS1: one\n  more about one', 'b.ts(3,4): error TS2: two']);
    expect(parseDiagnostics('')).toEqual([]);
    expect(parseDiagnostics('some unexpected output\n')).toEqual(['some unexpected output']);
  });

  it('shows the first ones and counts the rest', () => {
    const diagnostics = Array.from({ length: ShownDiagnostics + 5 }, (_, i) => `a.ts(${i + 1},1): error TS1: e${i}`);
    const text = formatDiagnostics({ status: 'failed', count: diagnostics.length, diagnostics });
    expect(text.split('\n')).toHaveLength(ShownDiagnostics + 1);
    expect(text).toMatch(/… and 5 more$/);
  });
});

describe('BackgroundTypeCheck', () => {
  it('reports errors, then their fixing, and says nothing for a first pass', async () => {
    const dir = project({ 'index.ts': 'export const x: number = 1;\n' });
    const heard: TypeCheck[] = [];
    const idle = () => new Promise<void>((resolve) => {
      const wait = () => (heard.length >= want ? resolve() : setTimeout(wait, 20));
      wait();
    });
    let want = 0;
    const checks = new BackgroundTypeCheck(dir, (c) => heard.push(c));
    checks.request();
    writeFileSync(join(dir, 'index.ts'), 'export const x: number = "a";\n');
    checks.request(); // during the first: one more check when it ends
    want = 1;
    await idle();
    expect(heard.map((c) => c.status)).toEqual(['failed']);
    writeFileSync(join(dir, 'index.ts'), 'export const x: number = 2;\n');
    checks.request();
    want = 2;
    await idle();
    expect(heard.map((c) => c.status)).toEqual(['failed', 'passed']);
    checks.stop();
  }, 60_000);
});
