/**
 * The root README's "From a clean clone" steps, exactly as written, on a fresh copy of the
 * repository: the files git tracks (as the working tree has them), no node_modules, nothing built.
 * They install, build, generate a project with this repo's create-func, pack the runtime, install
 * it in the project, run its tests and `npm start` it; the test calls the served function, then
 * stops it. The only thing added is PORT, so the server takes a free port instead of 8080.
 *
 * Then the README's local stack, in the same clone: `npx cluster-api serve` in one process, the
 * deploy lines in another; the function answers at the URL deploy printed; an edit and a second
 * `npm run deploy` change the answer. Added: CLUSTER_API_PORT=0 (a free port instead of 6443).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { npmEnv, repoRoot } from './support/packages.js';
import { describeResult, freePort, launch, run, until, waitForOk, type Running } from './support/process.js';

/** GET through the local gateway with the Knative URL's Host (Node's fetch neither resolves `*.localhost` nor sends a Host of ours). */
function viaGateway(gateway: string, host: string, path: string): Promise<{ status: number; body: string }> {
  const at = new URL(path, gateway);
  return new Promise((resolve, reject) => {
    httpGet({ hostname: at.hostname, port: at.port, path: at.pathname + at.search, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/** The `n`th shell block after `heading` in README.md. */
function readmeBlock(heading: string, n = 0): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const at = readme.indexOf(heading);
  const blocks = [...readme.slice(at).matchAll(/```sh\n([\s\S]*?)```/g)];
  if (at === -1 || !blocks[n]) throw new Error(`README.md has no shell block ${n} after "${heading}"`);
  return blocks[n]![1]!;
}

const readmeSteps = () => readmeBlock('From a clean clone');

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
const clone = join(work, 'repo');
let running: Running | undefined;
let cluster: Running | undefined;
let cloned = false;

afterAll(async () => {
  await running?.stop();
  await cluster?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('README: from a clean clone', () => {
  it('the documented commands install, build, create, pack, test and serve a function', async () => {
    const steps = readmeSteps();
    expect(steps).toMatch(/npm create func \.\.\/my-function/);
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
    await running.stop();
    cloned = true;
  }, 1_800_000);

  it('then the local stack: one command starts the cluster, npm run deploy answers at the printed URL, a redeploy after an edit changes the answer', async (ctx) => {
    if (!cloned) ctx.skip();
    const serve = readmeBlock('## Deploy it: the local stack', 0);
    const deploy = readmeBlock('## Deploy it: the local stack', 1);
    expect(serve).toMatch(/^npx cluster-api serve/m);
    expect(deploy).toMatch(/npm run deploy/);
    const env = npmEnv({ CLUSTER_API_PORT: '0', KUBECONFIG: '' });
    cluster = launch('bash', ['-e', '-c', serve], { cwd: clone, env });
    const kubeconfig = join(clone, 'data', 'kubeconfig.yaml');
    await until('the local cluster to listen', () => (/"msg":"listening"/.test(cluster!.output()) ? true : undefined), 60_000);
    await until('the embedded node', async () => ((await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'nodes', '-o', 'name'])).stdout.trim() || undefined), 30_000);
    const first = await run('bash', ['-e', '-c', deploy], { cwd: clone, env });
    expect(first.code, describeResult(first)).toBe(0);
    // A Knative Service: its URL, and where this machine reaches it (the local gateway, by Host).
    expect(first.stdout).toMatch(/^\s+URL\s+http:\/\/my-function\.default\.localhost$/m);
    const [, host, gateway] = /^\s+from here\s+\S+\s+\(curl -H 'Host: (\S+)' (\S+)\/\)$/m.exec(first.stdout) ?? [];
    expect(gateway, `deploy printed no way to reach it from here:\n${first.stdout}`).toBeTruthy();
    expect((await viaGateway(gateway!, host!, '/?name=you')).body).toContain('Hello, you!');
    const project = join(work, 'my-function');
    const source = join(project, 'src', 'index.ts');
    writeFileSync(source, readFileSync(source, 'utf8').replace('`Hello, ${name}!`', '`Hello again, ${name}!`'));
    const again = await run('npm', ['run', 'deploy'], { cwd: project, env: { ...env, KUBECONFIG: kubeconfig } });
    expect(again.code, describeResult(again)).toBe(0);
    // The gateway sends each request to the Route's revision of the moment: the old one until the new one is ready.
    const answers: string[] = [];
    await until('the new version at the printed URL', async () => {
      const res = await viaGateway(gateway!, host!, '/?name=you');
      expect(res.status).toBe(200);
      answers.push(res.body);
      return answers.at(-1)!.includes('Hello again, you!') || undefined;
    }, 30_000);
    expect(answers.slice(0, -1).every((a) => a.includes('Hello, you!'))).toBe(true);
  }, 300_000);
});
