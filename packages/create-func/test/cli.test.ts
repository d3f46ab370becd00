import { execFileSync, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entries, fakeRegistry, npmEnv, removeTempDirs, tempDir } from './helpers.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const cli = join(packageDir, 'dist', 'cli.js');

// The command as users run it: the compiled bin, in its own process, stdin not a TTY.
beforeAll(() => {
  execFileSync(process.execPath, [join(packageDir, '../../node_modules/typescript/bin/tsc'), '-b', packageDir], { stdio: 'inherit' });
});
afterAll(removeTempDirs);

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, detached = false) {
  const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<Run>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, result };
}

function run(args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<Run> {
  return spawnCli(args, cwd, env).result;
}

describe('create-func (the command)', () => {
  it('creates a project with --no-install and prints the next commands', async () => {
    const cwd = await tempDir();
    const result = await run(['shop-api', '--template', 'cloudevents', '--no-install'], cwd);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Creating cloudevents function "shop-api" in ./shop-api');
    expect(result.stdout).toMatch(/cd shop-api\n\s+npm install\s+# install the dependencies\n\s+npm test/);
    expect(JSON.parse(await readFile(join(cwd, 'shop-api', 'package.json'), 'utf8'))).toMatchObject({ name: 'shop-api' });
    expect(await entries(cwd)).toEqual(['shop-api']);
  });

  it('run from the checkout, packs the checkout\'s runtime into vendor/ and depends on the tarballs; --deps registry on the published package', async () => {
    const cwd = await tempDir();
    const result = await run(['from-checkout', '--no-install'], cwd);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('Packing @func/runtime from the checkout at');
    const pkg = JSON.parse(await readFile(join(cwd, 'from-checkout', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toMatchObject({
      '@func/runtime': 'file:vendor/func-runtime-0.1.0.tgz', '@func/oci': 'file:vendor/func-oci-0.1.0.tgz', '@func/kube-client': 'file:vendor/func-kube-client-0.1.0.tgz',
    });
    expect(await entries(join(cwd, 'from-checkout', 'vendor'))).toEqual(['func-kube-client-0.1.0.tgz', 'func-oci-0.1.0.tgz', 'func-runtime-0.1.0.tgz']);
    const published = await run(['published', '--no-install', '--deps', 'registry'], cwd);
    expect(published.code).toBe(0);
    expect(JSON.parse(await readFile(join(cwd, 'published', 'package.json'), 'utf8')).dependencies).toEqual({ '@func/runtime': '^0.1.0' });
    expect(await entries(join(cwd, 'published'))).not.toContain('vendor');
    const bad = await run(['x', '--deps', 'github'], cwd);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--deps must be checkout or registry, got "github"');
    expect(await entries(cwd)).toEqual(['from-checkout', 'published']);
  });

  it('prints the usage with --help and the version with --version', async () => {
    const help = await run(['--help'], await tempDir());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--template <http|cloudevents>');
    const version = await run(['--version'], await tempDir());
    const pkg = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout).toBe(`${pkg.version}\n`);
  });

  it.each([
    [['my-fn', '--name', 'Bad_Name', '--no-install'], 2, /"Bad_Name" is not a valid function name/],
    [['--name', '../escape', '--no-install'], 2, /"\.\.\/escape" is not a valid function name/],
    [['my-fn', '--template', 'grpc'], 2, /unknown template "grpc": choose one of http, cloudevents/],
    [['my-fn', '--template', '../../etc'], 2, /unknown template/],
    [['--no-install'], 2, /missing the function name: pass a directory or --name/],
    [['--what'], 2, /Unknown option '--what'/],
  ])('refuses %j, creating nothing', async (args, code, message) => {
    const cwd = await tempDir();
    const result = await run(args, cwd);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(await entries(cwd)).toEqual([]);
  });

  it('refuses an existing non-empty directory, and --force writes into it', async () => {
    const cwd = await tempDir();
    await run(['my-fn', '--no-install'], cwd);
    const refused = await run(['my-fn', '--no-install'], cwd);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/my-fn is not empty: .*--force/);
    const forced = await run(['my-fn', '--no-install', '--force', '-t', 'cloudevents'], cwd);
    expect(forced.code).toBe(0);
    expect(await readFile(join(cwd, 'my-fn', 'func.yaml'), 'utf8')).toMatch(/invoke: cloudevent/);
    expect(await entries(cwd)).toEqual(['my-fn']);
  });

  it('leaves nothing behind when npm install fails', async () => {
    const registry = await fakeRegistry('missing');
    const cwd = await tempDir();
    const result = await run(['my-fn'], cwd, npmEnv(registry.url, await tempDir('npm-cache-')));
    await registry.close();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/npm install failed .*nothing was created/);
    expect(await entries(cwd)).toEqual([]);
  });

  it('on Ctrl-C during npm install stops npm, removes everything and exits 130', async () => {
    const registry = await fakeRegistry('hang');
    const cwd = await tempDir();
    const { child, result: pending } = spawnCli(['my-fn', '-t', 'http'], cwd, npmEnv(registry.url, await tempDir('npm-cache-')));
    await registry.requested; // npm is installing
    const [staging] = await entries(cwd);
    expect(staging).toMatch(/^\.my-fn\.create-func-/);
    child.kill('SIGINT');

    const result = await pending;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/interrupted \(SIGINT\): nothing was created/);
    expect(await entries(cwd)).toEqual([]);
    await expect.poll(registry.openConnections, { timeout: 5_000 }).toBe(0);
    await registry.close();
  });

  it('on Ctrl-C in a terminal (SIGINT to the whole process group, npm included) exits 130 and leaves nothing', async () => {
    const registry = await fakeRegistry('hang');
    const cwd = await tempDir();
    // Its own process group, like a foreground job: the signal reaches create-func and npm at once.
    const { child, result: pending } = spawnCli(['my-fn'], cwd, npmEnv(registry.url, await tempDir('npm-cache-')), true);
    await registry.requested;
    process.kill(-child.pid!, 'SIGINT');

    const result = await pending;
    expect(result.code).toBe(130);
    expect(result.stderr).toMatch(/interrupted \(SIGINT\)/);
    expect(await entries(cwd)).toEqual([]);
    await expect.poll(registry.openConnections, { timeout: 5_000 }).toBe(0);
    await registry.close();
  });
});
