/**
 * The root README's "From a clean clone" steps, exactly as written, on a fresh copy of the
 * repository: the files git tracks (as the working tree has them), no node_modules, nothing built.
 * They install, build, generate a project with this repo's create-func, pack the runtime, install
 * it in the project, run its tests and `npm start` it; the test calls the served function, then
 * stops it. The only thing added is PORT, so the server takes a free port instead of 8080.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { npmEnv, repoRoot } from './support/packages.js';
import { freePort, launch, waitForOk, type Running } from './support/process.js';

/** The shell block that follows the "From a clean clone" paragraph of README.md. */
function readmeSteps(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const at = readme.indexOf('From a clean clone');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at === -1 || !block) throw new Error('README.md has no "From a clean clone" shell block');
  return block[1]!;
}

/** What a fresh `git clone` of this working tree would hold. */
function copyTrackedFiles(to: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const from = join(repoRoot, file);
    try {
      mkdirSync(dirname(join(to, file)), { recursive: true });
      copyFileSync(from, join(to, file));
    } catch (err) {
      // A file git tracks but the working tree deleted is not in a clone of it either.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

const work = mkdtempSync(join(tmpdir(), 'func-clean-clone-'));
let running: Running | undefined;

afterAll(async () => {
  await running?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('README: from a clean clone', () => {
  it('the documented commands install, build, create, pack, test and serve a function', async () => {
    const steps = readmeSteps();
    expect(steps).toMatch(/npm create func \.\.\/my-function/);
    const clone = join(work, 'repo');
    copyTrackedFiles(clone);
    const port = await freePort();
    // The user's own npm cache, as a person who has installed before has one.
    const env = npmEnv({ PORT: String(port) });
    delete env.npm_config_cache;
    running = launch('bash', ['-e', '-c', steps], { cwd: clone, env });
    await waitForOk(`http://127.0.0.1:${port}/health/readiness`, running, 1_500_000);
    const res = await fetch(`http://127.0.0.1:${port}/?name=clone`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Hello, clone!');
    const output = running.output();
    expect(output).toMatch(/Tests\s+\d+ passed/); // the generated project's npm test ran and passed
    expect(output).toMatch(/func-runtime: serving .* at http:\/\/localhost:\d+ \(log level /);
  }, 1_800_000);
});
