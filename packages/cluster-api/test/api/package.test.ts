/**
 * What the package ships: the build compiles no test helper (a `testing/` folder, anything importing
 * vitest) and no module that only a test or a bench runs; those harnesses build from testing/ to
 * testing/dist/, which the package's `files` leaves out.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const srcDir = join(packageDir, 'src');
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');
const work = mkdtempSync(join(tmpdir(), 'cluster-api-package-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Our src/ files a tsconfig compiles, as tsc itself resolves them. */
function compiled(tsconfig: string): string[] {
  const listed = execFileSync(process.execPath, [tsc, '-p', tsconfig, '--listFilesOnly'], { encoding: 'utf8' });
  return listed.split('\n').filter((f) => f.startsWith(srcDir + '/'));
}

/** The modules the package's entry points import, directly or not: the CLI and each folder's index.ts. */
function reachable(): Set<string> {
  const entries = [join(srcDir, 'cli.ts'), ...(readdirSync(srcDir, { recursive: true }) as string[]).filter((f) => basename(f) === 'index.ts').map((f) => join(srcDir, f))];
  const config = join(work, 'entries.json');
  // `types` off: tsc would look for @types/node beside this temporary file, and listing never type-checks.
  writeFileSync(config, JSON.stringify({ extends: join(packageDir, 'tsconfig.json'), compilerOptions: { types: [] }, files: entries, include: [] }));
  return new Set(compiled(config));
}

describe('the build', () => {
  const built = compiled(join(packageDir, 'tsconfig.json'));

  it('compiles no testing/ folder and no file that imports vitest', () => {
    expect(built.length).toBeGreaterThan(50);
    expect(built.filter((f) => f.includes('/testing/'))).toEqual([]);
    expect(built.filter((f) => /from ['"]vitest['"]/.test(readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('compiles only modules its entry points import: no harness that only a test or a bench runs', () => {
    const used = reachable();
    expect(used.size).toBeGreaterThan(50);
    expect(built.filter((f) => !used.has(f))).toEqual([]);
  });

  it('leaves the harnesses (testing/src, built to testing/dist) out of dist/ and out of the package files', () => {
    const harnesses = readdirSync(join(packageDir, 'testing/src')).map((f) => basename(f, '.ts'));
    expect(harnesses).toEqual(expect.arrayContaining(['kill-writer', 'standalone-broker', 'storage-speed', 'etcd-cluster', 'etcd-api-servers']));
    expect(built.filter((f) => harnesses.includes(basename(f, '.ts')))).toEqual([]);
    const harnessConfig = JSON.parse(readFileSync(join(packageDir, 'testing/tsconfig.json'), 'utf8')) as { compilerOptions: { outDir: string } };
    expect(harnessConfig.compilerOptions.outDir).toBe('dist');
    const files = (JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { files: string[] }).files;
    expect(files.filter((f) => f.replace(/^!?\/?/, '').startsWith('testing'))).toEqual([]);
  });
});
