/**
 * Type errors do not ship: `build` and `deploy` (which builds the same way) refuse them unless told
 * `--no-typecheck`; `dev` warns of them and keeps serving. With the project's own TypeScript.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort, killAll, spawnCli, text, until } from './dev-helpers.js';
import { STEP_LINE } from '../src/deploy/progress.js';

const work = mkdtempSync(join(tmpdir(), 'func-typecheck-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
afterEach(() => killAll());
const typescript = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')));

let n = 0;
function project(source: string): string {
  const dir = join(work, `p${n++}`);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `typed-${n}`, private: true, type: 'module', main: 'index.ts' }));
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', target: 'es2022', skipLibCheck: true, types: [] }, include: ['*.ts'] }));
  symlinkSync(typescript, join(dir, 'node_modules', 'typescript'));
  writeFileSync(join(dir, 'index.ts'), source);
  return dir;
}

const Broken = 'export const handle = (): string => {\n  const n: number = "not a number";\n  return `n=${n}`;\n};\n';

describe('type-checking', () => {
  it('build refuses a type error, naming file, line and the way out; --no-typecheck builds', async () => {
    const dir = project(Broken);
    const refused = spawnCli(['build', '.'], { cwd: dir });
    expect(await refused.exited).toBe(1);
    expect(refused.output()).toMatch(/1 type error; fix it, or pass --no-typecheck to ship anyway:\nindex\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
    const shipped = spawnCli(['build', '.', '--no-typecheck'], { cwd: dir });
    expect(await shipped.exited).toBe(0);
    expect(shipped.output()).toMatch(/built dist\/index\.mjs/);
  });

  it('build of a project without errors passes silently', async () => {
    const dir = project('export const handle = (): string => "ok";\n');
    const built = spawnCli(['build', '.'], { cwd: dir });
    expect(await built.exited).toBe(0);
    // Only the progress of a step over a second (type-checking… done in N s): no warning.
    expect(built.output().split('\n').filter((l) => !STEP_LINE.test(l)).join('\n')).not.toMatch(/type/);
  });

  it('dev serves despite a type error and warns of it, then says when it is fixed', async () => {
    const dir = project(Broken);
    const port = await freePort();
    const dev = spawnCli(['dev', dir, '--port', String(port), '--host', '127.0.0.1']);
    await dev.waitFor(/1 type error \(still serving/, 60_000);
    expect(await until('the function to answer', () => text(`http://127.0.0.1:${port}/`))).toContain('n=not a number');
    writeFileSync(join(dir, 'index.ts'), 'export const handle = (): string => "fixed";\n');
    await dev.waitFor(/type errors fixed/, 60_000);
    expect(await until('the new version', async () => ((await text(`http://127.0.0.1:${port}/`)) === 'fixed' ? 'fixed' : undefined))).toBe('fixed');
  }, 120_000);
});
