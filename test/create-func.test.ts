/**
 * A user's first minute, end to end: the repo's packages are packed as they would be published,
 * a project is generated from each template with the packed create-func (through `npm exec`, as
 * `npm create func` does), which runs npm install: @func/runtime comes from a local registry
 * serving the packed tarball (as if published), everything else from the npm registry. Then the
 * project is tested, started as a real process, called over HTTP, and built.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HTTP, CloudEvent } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mustRun, npmEnv, packPackages, runtimePackages, type Tarballs } from './support/packages.js';
import { describeResult, freePort, launch, run, waitForOk } from './support/process.js';
import { hangingRegistry, tarballRegistry } from './support/registry.js';

const templates = ['http', 'cloudevents'] as const;
type Template = (typeof templates)[number];
const projectName = (t: Template) => `first-${t}`;

let work: string;
let packs: Tarballs;
let createFuncBin: string;
let runtimeRegistry: Awaited<ReturnType<typeof tarballRegistry>> | undefined;
/** npm settings of the user: @func/* from the local registry, the rest from the npm registry. */
let userEnv: NodeJS.ProcessEnv;
const projectDir = (t: Template) => join(work, 'projects', projectName(t));

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'func-e2e-'));
  packs = await packPackages(join(work, 'packs'));
  await mkdir(join(work, 'projects'));
  runtimeRegistry = await tarballRegistry(runtimePackages(packs));
  await writeFile(join(work, 'npmrc'), `${runtimeRegistry.scope}:registry=${runtimeRegistry.url}\n`);
  userEnv = npmEnv({ npm_config_userconfig: join(work, 'npmrc') });
  // The packed create-func installed on its own, as `npm install -g create-func` would.
  await mustRun('npm', ['install', '--prefix', join(work, 'tools'), packs.templates, packs.createFunc], work, userEnv);
  createFuncBin = join(work, 'tools', 'node_modules', '.bin', 'create-func');
});

afterAll(async () => {
  await runtimeRegistry?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function inProject(t: Template, script: string[], extraEnv: NodeJS.ProcessEnv = {}) {
  const result = await run('npm', script, { cwd: projectDir(t), env: { ...userEnv, ...extraEnv } });
  expect(result.code, `npm ${script.join(' ')} in ${projectName(t)}: ${describeResult(result)}`).toBe(0);
  return result;
}

describe('npm create func, for each template', () => {
  it('generates and installs the projects with the packed create-func, run by npm exec as npm create runs it', async () => {
    await Promise.all(
      templates.map(async (t) => {
        const args = ['exec', '--yes', `--package=${packs.createFunc}`, `--package=${packs.templates}`, '--', 'create-func', projectName(t), '--template', t];
        const result = await run('npm', args, { cwd: join(work, 'projects'), env: userEnv });
        expect(result.code, describeResult(result)).toBe(0);
        expect(result.stdout).toContain('Installing dependencies with npm install');
        expect(result.stdout).toMatch(/added \d+ packages/); // npm's own output reaches the user
        expect(result.stdout).toContain(`cd ${projectName(t)}`);
        expect(result.stdout).not.toMatch(/^\s+npm install/m); // installed already: not a next step
        const files = await readdir(projectDir(t));
        expect(files).toEqual(expect.arrayContaining(['func.yaml', 'package.json', 'package-lock.json', 'node_modules', 'README.md', 'src', 'test', 'tsconfig.json', '.gitignore', 'Containerfile']));
        expect(await readFile(join(projectDir(t), 'func.yaml'), 'utf8')).toContain(`name: ${projectName(t)}`);
        const pkg = JSON.parse(await readFile(join(projectDir(t), 'package.json'), 'utf8'));
        expect(pkg.dependencies['@func/runtime']).toBe('^0.1.0');
        const lock = JSON.parse(await readFile(join(projectDir(t), 'package-lock.json'), 'utf8'));
        expect(lock.packages['node_modules/@func/runtime'].resolved).toContain(runtimeRegistry!.url);
      }),
    );
    expect((await readdir(join(work, 'projects'))).sort()).toEqual(templates.map(projectName).sort());
  });

  it('passes its own npm test: the type check, then the unit and integration tests', async () => {
    const results = await Promise.all(templates.map((t) => inProject(t, ['test'])));
    for (const result of results) {
      expect(result.stdout).toMatch(/test\/unit\.ts/);
      expect(result.stdout).toMatch(/test\/integration\.ts/);
      expect(result.stdout).toMatch(/Tests\s+\d+ passed/);
      expect(result.stdout).not.toMatch(/failed/);
    }
  });

  it.each(templates)('%s: npm start serves it on PORT; a request (and npm run invoke) gets the reply', async (t) => {
    const port = await freePort();
    const server = launch('npm', ['start'], { cwd: projectDir(t), env: npmEnv({ PORT: String(port) }) });
    try {
      await waitForOk(`http://127.0.0.1:${port}/health/readiness`, server, 90_000);
      if (t === 'http') {
        const res = await fetch(`http://127.0.0.1:${port}/?name=e2e`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        expect(await res.text()).toBe('Hello, e2e!\nYou sent GET /.\n');
      } else {
        const message = HTTP.binary(new CloudEvent({ source: '/e2e', type: 'com.example.customer.created', data: { name: 'Ada', customerId: '7' } }));
        const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
        expect(res.status).toBe(200);
        expect(res.headers.get('ce-type')).toBe('com.example.customer.greeted');
        expect(res.headers.get('ce-source')).toBe(`/${projectName(t)}`);
        expect(await res.json()).toEqual({ customerId: '7', message: 'Hello, Ada!' });
      }
      const invoked = await inProject(t, ['run', 'invoke'], { PORT: String(port) });
      expect(invoked.stdout).toContain('200 OK');
      expect(invoked.stdout).toContain(t === 'http' ? 'Hello, you!' : 'ce-type: com.example.customer.greeted');
    } finally {
      await server.stop();
    }
    // The function logged through the runtime at its declared level (info): JSON, one object per line.
    const logged = t === 'http' ? 'GET / received' : 'com.example.customer.created';
    expect(server.output()).toMatch(new RegExp(`^\\{.*"level":30.*"msg":"[^"]*${logged}[^"]*".*\\}$`, 'm'));
  });

  it('builds with npm run build', async () => {
    await Promise.all(templates.map((t) => rm(join(projectDir(t), 'dist'), { recursive: true, force: true })));
    await Promise.all(templates.map((t) => inProject(t, ['run', 'build'])));
    for (const t of templates) await stat(join(projectDir(t), 'dist', 'src', 'index.js'));
  });
});

describe('npm create func, given bad input', () => {
  async function emptyDir(): Promise<string> {
    return mkdtemp(join(work, 'bad-'));
  }

  it.each([
    ['an invalid name', ['--name', 'My_Function', '--no-install'], 2, /"My_Function" is not a valid function name/],
    ['a traversal attempt as the name', ['--name', '../../outside', '--no-install'], 2, /not a valid function name/],
    ['an unknown template', ['fn', '--template', 'grpc', '--no-install'], 2, /unknown template "grpc": choose one of http, cloudevents/],
    ['no name and no terminal to ask on', ['--no-install'], 2, /missing the function name/],
  ])('refuses %s and creates nothing', async (_what, args, code, message) => {
    const cwd = await emptyDir();
    const result = await run(createFuncBin, args, { cwd, env: npmEnv() });
    expect(result.code, describeResult(result)).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('refuses an existing non-empty directory and leaves it as it was', async () => {
    const cwd = await emptyDir();
    await mkdir(join(cwd, 'fn'));
    await writeFile(join(cwd, 'fn', 'keep.txt'), 'mine');
    const result = await run(createFuncBin, ['fn', '--no-install'], { cwd, env: npmEnv() });
    expect(result.code, describeResult(result)).toBe(1);
    expect(result.stderr).toMatch(/is not empty: .*--force/);
    expect(await readdir(cwd)).toEqual(['fn']);
    expect(await readdir(join(cwd, 'fn'))).toEqual(['keep.txt']);
  });

  it('interrupted during npm install (Ctrl-C), leaves no debris and no npm running', async () => {
    const registry = await hangingRegistry();
    try {
      const cwd = await emptyDir();
      const env = npmEnv({ npm_config_registry: registry.url, npm_config_cache: join(cwd, '..', 'cache-interrupted'), npm_config_fetch_retries: '0' });
      const creating = launch(createFuncBin, ['fn', '--template', 'cloudevents'], { cwd, env });
      await registry.requested;
      expect((await readdir(cwd)).some((e) => e.startsWith('.fn.create-func-'))).toBe(true);
      creating.child.kill('SIGINT');
      const result = await creating.result;
      expect(result.code, describeResult(result)).toBe(130);
      expect(result.stderr).toMatch(/interrupted \(SIGINT\): nothing was created/);
      expect(await readdir(cwd)).toEqual([]);
      await expect.poll(registry.openConnections, { timeout: 10_000 }).toBe(0);
    } finally {
      await registry.close();
    }
  });
});
