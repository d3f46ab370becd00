/**
 * The `cluster-api serve` process itself (built dist/cli.js, as users run it): start-up checks,
 * SIGTERM, and durability — every write that got a 2xx survives kill -9 and a restart on the same
 * SQLite data dir.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pod, tempDir } from '../support/helpers.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

interface Proc {
  child: ChildProcess;
  url: string;
  stderr: () => string;
}

const running = new Set<ChildProcess>();

function start(args: string[]): Promise<Proc> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(err);
      if (m) resolve({ child, url: m[1]!, stderr: () => err });
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

/** A process expected to exit by itself; killed after 20 s so a hang fails instead of lingering. */
function exitOf(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stderr }))));
}

const headers = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });

describe('cluster-api serve (process)', () => {
  beforeAll(() => {
    if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npx tsc -b packages/cluster-api)`);
  });
  afterEach(() => {
    for (const child of running) child.kill('SIGKILL');
  });

  it('keeps every acknowledged write across kill -9 and a restart', async () => {
    const dir = tempDir();
    const args = ['--data-dir', join(dir, 'data'), '--insecure-http'];
    const first = await start(args);
    const token = readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim();
    const ns = await fetch(`${first.url}/api/v1/namespaces`, { method: 'POST', headers: headers(token), body: JSON.stringify({ metadata: { name: 'durable' } }) });
    expect(ns.status).toBe(201);
    const acknowledged: string[] = [];
    let stop = false;
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `p-${w}-${i}`;
        const res = await fetch(`${first.url}/api/v1/namespaces/durable/pods`, { method: 'POST', headers: headers(token), body: JSON.stringify(pod(name)) }).catch(() => undefined);
        if (res?.status === 201) acknowledged.push(name);
        if (!res) return;
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    while (acknowledged.length < 150) await new Promise((r) => setTimeout(r, 10));
    first.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await new Promise((r) => first.child.exitCode !== null || first.child.signalCode !== null ? r(null) : first.child.once('exit', r));

    const second = await start(args);
    const list = await fetch(`${second.url}/api/v1/namespaces/durable/pods`, { headers: headers(token) }).then((r) => r.json() as Promise<{ items: Array<{ metadata: { name: string } }> }>);
    const stored = new Set(list.items.map((p) => p.metadata.name));
    expect(acknowledged.length).toBeGreaterThanOrEqual(150);
    expect(acknowledged.filter((n) => !stored.has(n))).toEqual([]);
    second.child.kill('SIGTERM');
    // Its node agent writes pod directories under the data dir until it has exited.
    await new Promise((r) => second.child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('generates TLS material, a 0600 token and a kubeconfig, and exits 0 on SIGTERM', async () => {
    const dir = tempDir();
    const proc = await start(['--data-dir', join(dir, 'data'), '--kubeconfig-out', join(dir, 'kube.yaml')]);
    expect(proc.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(statSync(join(dir, 'data', 'admin.token')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'data', 'tls', 'serving.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'kube.yaml')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'kube.yaml'), 'utf8')).toContain('certificate-authority-data:');
    const token = readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim();
    expect(proc.stderr()).not.toContain(token);
    const exit = new Promise((r) => proc.child.once('exit', (code) => r(code)));
    proc.child.kill('SIGTERM');
    expect(await exit).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  // Concurrent: each spawns a short-lived process of its own (none is in `running`).
  it.concurrent.each([
    [['serve', '--insecure-http', '--bind-address', '0.0.0.0'], /--insecure-http is only allowed on a loopback bind address/],
    [['serve', '--tls-cert-file', '/nonexistent.crt'], /must be given together/],
    [['serve', '--tls-ca-file', '/some/ca.crt'], /--tls-ca-file goes with --tls-cert-file/],
    [['serve', '--port', '70000'], /--port must be an integer/],
    [['serve', '--storage', 'nosuch://x'], /--storage: invalid storage URL/],
    [['serve', '--bogus-flag'], /Unknown argument/],
    [['frobnicate'], /Unknown argument|Not enough|command/i],
  ])('refuses %j with a clear message and a non-zero exit', async (args, message) => {
    const dir = tempDir();
    const { code, stderr } = await exitOf([...args, '--data-dir', join(dir, 'data'), '--port', args.includes('--port') ? '70000' : '0']);
    expect(code).not.toBe(0);
    expect(stderr).toMatch(message);
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a malformed token file without printing its contents', async () => {
    const dir = tempDir();
    const file = join(dir, 'tokens.csv');
    writeFileSync(file, 'supersecret-token-value\n');
    const { code, stderr } = await exitOf(['serve', '--port', '0', '--data-dir', join(dir, 'data'), '--token-auth-file', file]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/token file line 1: must have at least 3 columns/);
    expect(stderr).not.toContain('supersecret');
    rmSync(dir, { recursive: true, force: true });
  });
});
