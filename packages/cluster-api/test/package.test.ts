/** What the package ships: the build compiles no test helper (a `testing/` folder, anything importing vitest). */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc');

describe('the build', () => {
  it('compiles no testing/ folder and no file that imports vitest', () => {
    const listed = execFileSync(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.json'), '--listFilesOnly'], { encoding: 'utf8' });
    const ours = listed.split('\n').filter((f) => f.startsWith(join(packageDir, 'src')));
    expect(ours.length).toBeGreaterThan(50);
    expect(ours.filter((f) => f.includes('/testing/'))).toEqual([]);
    expect(ours.filter((f) => /from ['"]vitest['"]/.test(readFileSync(f, 'utf8')))).toEqual([]);
  });
});
