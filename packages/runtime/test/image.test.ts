/**
 * `func-runtime build --image` as a user runs it: a TypeScript function → an OCI image in a layout
 * (checked by skopeo), reproducible across copies and layouts, that unpacks and serves as the node
 * agent runs it (`node <root>/func/runtime/func-runtime.mjs <root>/func/app`); pushed to a real
 * `docker-registry` (skopeo inspects what arrived), onto a base image pulled from it, and refused
 * with one message when the registry wants credentials it did not get.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImage, ImageLayout, pushImage, unpackImage } from '@func/oci';
import { haveRegistry, skopeo, startRegistry, USER, type RunningRegistry } from '../../oci/test/registry-server.js';
import { copyFixture, freePort, killAll, spawnCli, until } from './dev-helpers.js';

const work = mkdtempSync(join(tmpdir(), 'func-image-'));
const removals: (() => void)[] = [];
afterAll(async () => {
  await killAll();
  for (const r of removals) r();
  rmSync(work, { recursive: true, force: true });
});

function project(): string {
  const fx = copyFixture('deployable');
  removals.push(fx.remove);
  return fx.dir;
}

/** Runs the CLI in `cwd` with HOME in the work dir (no docker config, a private runtime-layer cache). */
async function cli(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const proc = spawnCli(args, { cwd, env: { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), DOCKER_CONFIG: join(work, 'no-docker-config'), KUBECONFIG: '', ...env } });
  const code = await proc.exited;
  return { code, output: proc.output() };
}

const digestIn = (output: string) => /\((sha256:[0-9a-f]{64})\)/.exec(output)?.[1];

describe('func-runtime build --image (local layout)', () => {
  let dir: string;
  let digest: string;
  const layout = join(work, 'layout-a');

  beforeAll(async () => {
    dir = project();
    const { code, output } = await cli(['build', '--image', 'localhost/deployable:latest', '--images', layout], dir);
    expect(code, output).toBe(0);
    expect(output).toMatch(/built localhost\/deployable:latest \(sha256:[0-9a-f]{64}\) in \d+ ms into /);
    digest = digestIn(output)!;
  }, 60_000);

  it('is an OCI image skopeo reads: runtime, code cache and function layers, the function image labels', async () => {
    const info = JSON.parse(await skopeo(['inspect', `oci:${layout}:localhost/deployable:latest`])) as { Digest: string; Labels: Record<string, string>; Layers: string[] };
    expect(info.Digest).toBe(digest);
    expect(info.Layers).toHaveLength(3);
    const { history } = JSON.parse(await skopeo(['inspect', '--config', `oci:${layout}:localhost/deployable:latest`])) as { history: { created_by: string }[] };
    expect(history.map((h) => h.created_by)).toEqual(['func-runtime: runtime (/func/runtime)', `func-runtime: code cache for Node.js ${process.version} (/func/runtime)`, 'func-runtime: function deployable (/func/app)']);
    expect(info.Labels).toMatchObject({ 'dev.func.image': 'function', 'function.knative.dev/name': 'deployable', 'function.knative.dev/runtime': 'typescript', 'dev.func.runtime.cli': '/func/runtime/func-runtime.mjs' });
    const config = JSON.parse(await skopeo(['inspect', '--config', `oci:${layout}:localhost/deployable:latest`])) as { config: { Entrypoint: string[]; Cmd: string[] } };
    expect(config.config.Entrypoint).toEqual(['node', '/func/runtime/func-runtime.mjs']);
    expect(config.config.Cmd).toEqual(['/func/app']);
    // Tagged by name and by digest: a node (or a rollback) still finds this digest once the name moves on.
    expect(await (await ImageLayout.open(layout)).tags()).toEqual(['localhost/deployable:latest', `localhost/deployable@${digest}`]);
  });

  it('is reproducible: another copy of the source, another layout, another runtime cache, func.yaml\'s deploy bookkeeping → the same digest', async () => {
    const other = project();
    const yaml = join(other, 'func.yaml');
    writeFileSync(yaml, `${readFileSync(yaml, 'utf8')}  namespace: shop\nimage: localhost/deployable:latest\nimageDigest: sha256:${'e'.repeat(64)}\n`);
    // A cache of its own: the runtime is bundled and its code cache made again, to the same bytes.
    const { code, output } = await cli(['build', '--image', 'localhost/deployable:latest', '--images', join(work, 'layout-b')], other, { XDG_CACHE_HOME: join(work, 'cache-b') });
    expect(code, output).toBe(0);
    expect(digestIn(output)).toBe(digest);
  });

  it('an edit changes the function layer only: the runtime and code cache layers are shared', async () => {
    const edited = project();
    writeFileSync(join(edited, 'src/greeting.ts'), readFileSync(join(edited, 'src/greeting.ts'), 'utf8').replace("'v1'", "'v2'"));
    const { code, output } = await cli(['build', '--image', 'localhost/deployable:latest', '--images', layout], edited);
    expect(code, output).toBe(0);
    expect(digestIn(output)).not.toBe(digest);
    const before = JSON.parse(await skopeo(['inspect', `oci:${layout}:localhost/deployable@${digest}`])) as { Layers: string[] };
    const after = JSON.parse(await skopeo(['inspect', `oci:${layout}:localhost/deployable:latest`])) as { Layers: string[] };
    expect(after.Layers.slice(0, 2)).toEqual(before.Layers.slice(0, 2));
    expect(after.Layers[2]).not.toBe(before.Layers[2]);
  });

  it('unpacked, it serves as the node agent runs it: HTTP, a CloudEvent, metrics, request logs', async () => {
    const root = join(work, 'rootfs');
    const config = await unpackImage(await ImageLayout.open(layout), digest, root);
    const [node, entry] = config.config!.Entrypoint!;
    const port = await freePort();
    const env = Object.fromEntries((config.config!.Env ?? []).map((e) => e.split(/=(.*)/s).slice(0, 2)));
    const { spawn } = await import('node:child_process');
    const child = spawn(node === 'node' ? process.execPath : node!, [join(root, entry!), join(root, config.config!.Cmd![0]!)], { cwd: tmpdir(), env: { PATH: process.env.PATH, ...env, PORT: String(port), FUNC_HOST: '127.0.0.1', FUNC_LOG_LEVEL: 'info' } });
    removals.push(() => child.kill('SIGKILL'));
    let logs = '';
    child.stdout.on('data', (d: Buffer) => (logs += d));
    const base = `http://127.0.0.1:${port}`;
    await until('the unpacked function to answer', () => fetch(`${base}/health/readiness`).then((r) => (r.ok ? true : undefined), () => undefined));
    expect(await (await fetch(`${base}/?name=image`)).text()).toBe('Hello, image! (v1)');
    const ce = await fetch(base, { method: 'POST', headers: { 'ce-specversion': '1.0', 'ce-id': '1', 'ce-source': '/t', 'ce-type': 'order.created', 'content-type': 'application/json' }, body: '{"id":7}' });
    expect(await ce.json()).toEqual({ type: 'order.created', data: { id: 7 } });
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('faas_invocations');
    await until('a request log line', () => (/"msg":"request completed"/.test(logs) ? true : undefined));
    child.kill('SIGTERM');
  });

  it('unpacked, its runtime starts from the code cache, which this Node.js accepts (a damaged one it refuses, and serves anyway); other invocations reach the whole command line', async () => {
    const root = join(work, 'rootfs');
    const runtimeDir = join(root, 'func/runtime');
    const { execFile } = await import('node:child_process');
    const node = (args: string[]) => new Promise<{ code: number; out: string }>((resolve) => {
      execFile(process.execPath, args, { cwd: tmpdir(), env: { PATH: process.env.PATH } }, (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, out: stdout + stderr }));
    });
    // As the image's entry does it, in a Node.js with no flags (a pod's): V8 takes the cache.
    const loader = pathToFileURL(join(import.meta.dirname, '../dist/image/loader.js')).href;
    const loaded = await node(['--input-type=module', '-e', `import { loadServeEntry } from ${JSON.stringify(loader)}; console.log(JSON.stringify({ rejected: loadServeEntry(${JSON.stringify(runtimeDir)}).cacheRejected }))`]);
    expect(JSON.parse(loaded.out)).toEqual({ rejected: false });
    // A flag V8 hashes makes it refuse the cache: then the script compiles from source and still serves.
    const flagged = await node(['--stack-size=900', '--input-type=module', '-e', `import { loadServeEntry } from ${JSON.stringify(loader)}; console.log(JSON.stringify({ rejected: loadServeEntry(${JSON.stringify(runtimeDir)}).cacheRejected }))`]);
    expect(JSON.parse(flagged.out)).toEqual({ rejected: true });
    const entry = join(runtimeDir, 'func-runtime.mjs');
    const help = await node([entry, '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toMatch(/^func-runtime \[path\]\n/);
    expect(await node([entry, '--version'])).toEqual({ code: 0, out: `${JSON.parse(readFileSync(join(import.meta.dirname, '../package.json'), 'utf8')).version}\n` });
    expect(await node([entry, 'biuld'])).toEqual({ code: 2, out: 'func-runtime: unknown command "biuld". Did you mean "build"?\nRun func-runtime --help for usage.\n' });
    const missing = await node([entry, join(root, 'no-such-dir')]);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/^func-runtime: No function at .*no-such-dir: the path does not exist\./);
    // A damaged cache is refused by V8, and the runtime compiles from source and serves as before.
    const damaged = join(work, 'runtime-damaged-cache');
    cpSync(runtimeDir, damaged, { recursive: true });
    writeFileSync(join(damaged, 'func-runtime-serve.cjs.v8cache'), Buffer.alloc(4096, 0x5a));
    const refused = await node(['--input-type=module', '-e', `import { loadServeEntry } from ${JSON.stringify(loader)}; console.log(JSON.stringify({ rejected: loadServeEntry(${JSON.stringify(damaged)}).cacheRejected }))`]);
    expect(JSON.parse(refused.out)).toEqual({ rejected: true });
    const port = await freePort();
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [join(damaged, 'func-runtime.mjs'), join(root, 'func/app')], { cwd: tmpdir(), env: { PATH: process.env.PATH, PORT: String(port), FUNC_HOST: '127.0.0.1' }, stdio: 'ignore' });
    removals.push(() => child.kill('SIGKILL'));
    await until('the function to answer with a damaged code cache', () => fetch(`http://127.0.0.1:${port}/?name=cache`).then((r) => (r.ok ? r.text() : undefined), () => undefined));
    expect(await (await fetch(`http://127.0.0.1:${port}/?name=cache`)).text()).toBe('Hello, cache! (v1)');
    child.kill('SIGTERM');
  });

  it('refuses a source that does not build, a func.yaml the schema refuses, and no func.yaml, each in one line', async () => {
    const broken = project();
    writeFileSync(join(broken, 'src/greeting.ts'), 'export const VERSION = ;\n');
    const built = await cli(['build', '--image', 'localhost/deployable:latest', '--images', layout], broken);
    expect(built.code).toBe(1);
    expect(built.output).toMatch(/^func-runtime: Cannot bundle .*src\/greeting\.ts:1:\d+: .*\n$/);
    const invalid = project();
    writeFileSync(join(invalid, 'func.yaml'), 'specVersion: 0.36.0\nname: Not_A_DNS_Label\n');
    const schema = await cli(['build', '--image', 'localhost/x:latest', '--images', layout], invalid);
    expect(schema.code).toBe(1);
    expect(schema.output).toMatch(/^func-runtime: .*func\.yaml does not match func\.schema\.json: \/name: .*\n$/);
    rmSync(join(invalid, 'func.yaml'));
    const none = await cli(['build', '--image', 'localhost/x:latest', '--images', layout], invalid);
    expect(none.code).toBe(1);
    expect(none.output).toMatch(/^func-runtime: No func\.yaml in .*\n$/);
  });
});

describe.skipIf(!haveRegistry)('func-runtime build --image --push (a real docker-registry)', () => {
  let registry: RunningRegistry;
  let secured: RunningRegistry;
  beforeAll(async () => {
    [registry, secured] = await Promise.all([startRegistry(), startRegistry('htpasswd')]);
  }, 60_000);
  afterAll(async () => Promise.all([registry?.stop(), secured?.stop()]));

  it('pushes the image; skopeo inspects the same digest and labels in the registry', async () => {
    const ref = `${registry.host}/fn/deployable:v1`;
    const { code, output } = await cli(['build', '--image', ref, '--push', '--images', join(work, 'layout-push')], project());
    expect(code, output).toBe(0);
    expect(output).toMatch(new RegExp(`pushed ${registry.host}/fn/deployable@sha256:[0-9a-f]{64}`));
    // The next step after a push is the image in a manifest, not a deploy that builds it again.
    expect(output).toMatch(new RegExp(`run it from any pod spec or manifest as image: ${registry.host}/fn/deployable@sha256:[0-9a-f]{64}`));
    expect(output).not.toContain('deploy it with');
    const info = JSON.parse(await skopeo(['inspect', '--tls-verify=false', `docker://${ref}`])) as { Digest: string; Labels: Record<string, string> };
    expect(info.Digest).toBe(digestIn(output));
    expect(info.Labels['dev.func.image']).toBe('function');
  });

  it('--base appends our layers onto a base pulled from the registry (as a Node.js image would be)', async () => {
    const baseLayout = await ImageLayout.open(join(work, 'base-layout'));
    const base = await buildImage(baseLayout, { layers: [{ entries: [{ path: 'usr/local/bin/node-placeholder', type: 'file', data: Buffer.from('#!/bin/sh\n'), mode: 0o755 }] }], config: { Env: ['PATH=/usr/local/bin:/usr/bin', 'NODE_VERSION=22'], Cmd: ['node'] }, tag: 'node' });
    await pushImage(baseLayout, 'node', `${registry.host}/library/node:22-slim`);
    const ref = `${registry.host}/fn/on-base:v1`;
    const { code, output } = await cli(['build', '--image', ref, '--base', `${registry.host}/library/node:22-slim`, '--push', '--images', join(work, 'layout-base')], project());
    expect(code, output).toBe(0);
    const info = JSON.parse(await skopeo(['inspect', '--tls-verify=false', `docker://${ref}`])) as { Layers: string[]; Env: string[] };
    expect(info.Layers).toHaveLength(3);
    expect(info.Layers[0]).toBe(base.manifest.layers[0]!.digest);
    expect(info.Env).toEqual(expect.arrayContaining(['PATH=/usr/local/bin:/usr/bin', 'NODE_VERSION=22', 'NODE_ENV=production', 'PORT=8080']));
    const config = JSON.parse(await skopeo(['inspect', '--tls-verify=false', '--config', `docker://${ref}`])) as { config: { Cmd: string[] }; history: { created_by?: string }[] };
    expect(config.config.Cmd).toEqual(['/func/app']);
    // The base's Node.js is not this one: no code cache layer (its V8 would refuse it).
    expect(config.history.map((h) => h.created_by).filter((c) => c?.startsWith('func-runtime:'))).toEqual(['func-runtime: runtime (/func/runtime)', 'func-runtime: function deployable (/func/app)']);
  });

  it('registry auth: none or a wrong password is one message that says how to log in, with no secret; the right one pushes', async () => {
    const ref = `${secured.host}/fn/deployable:v1`;
    const args = ['build', '--image', ref, '--push', '--images', join(work, 'layout-auth')];
    const none = await cli(args, project());
    expect(none.code).toBe(1);
    expect(none.output).toMatch(/^func-runtime: Cannot push .*Unauthorized.*--username \/ --password .*docker login.*\n$/);
    const wrong = await cli([...args, '--username', USER.username, '--password', 'not-the-password'], project());
    expect(wrong.code).toBe(1);
    expect(wrong.output).toMatch(/Unauthorized/);
    expect(wrong.output).not.toContain('not-the-password');
    const right = await cli(args, project(), { FUNC_USERNAME: USER.username, FUNC_PASSWORD: USER.password });
    expect(right.code, right.output).toBe(0);
    expect(await skopeo(['inspect', '--tls-verify=false', '--creds', `${USER.username}:${USER.password}`, `docker://${ref}`])).toContain('"dev.func.image": "function"');
  });
});
