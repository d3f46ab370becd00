/**
 * A TypeScript project written for faas-js-runtime 4 (fixtures/faas-project: every type name it
 * exports, typed handle signatures, CloudEvent returns, the Function object, start() with
 * InvokerOptions) with this package installed under the name faas-js-runtime, as
 * `npm install faas-js-runtime@npm:@func/runtime` installs it: a copy of package.json, dist/ and bin/ in
 * node_modules/faas-js-runtime, and its `faas-js-runtime` bin linked in node_modules/.bin. The
 * project type-checks with strict tsc, passes its own test, and its start scripts
 * (`faas-js-runtime ./build/src/index.js`) serve it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CloudEvent, HTTP } from 'cloudevents';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, freePort, until } from './dev-helpers.js';

const RUNTIME = fileURLToPath(new URL('..', import.meta.url));
const REPO_MODULES = fileURLToPath(new URL('../../../node_modules', import.meta.url));
const TSC = join(REPO_MODULES, 'typescript', 'bin', 'tsc');

let dir: string;
const children: ChildProcess[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'faas-project-'));
  cpSync(join(FIXTURES, 'faas-project'), dir, { recursive: true });
  const installed = join(dir, 'node_modules', 'faas-js-runtime');
  mkdirSync(installed, { recursive: true });
  cpSync(join(RUNTIME, 'package.json'), join(installed, 'package.json'));
  for (const part of ['dist', 'bin']) cpSync(join(RUNTIME, part), join(installed, part), { recursive: true });
  // The package's own dependencies, and the project's cloudevents and @types/node, as npm would place them.
  symlinkSync(REPO_MODULES, join(installed, 'node_modules'), 'dir');
  for (const dep of ['cloudevents', '@types']) symlinkSync(join(REPO_MODULES, dep), join(dir, 'node_modules', dep), 'dir');
  mkdirSync(join(dir, 'node_modules', '.bin'));
  symlinkSync('../faas-js-runtime/bin/cli.js', join(dir, 'node_modules', '.bin', 'faas-js-runtime'));
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  child: ChildProcess;
  output(): string;
  stdout(): string;
  /** The exit code, or the signal that ended it. */
  exited: Promise<number | string>;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Run {
  // Its own process group: npm runs the script under a shell, and the whole group is stopped at the end.
  const child = spawn(command, args, { cwd: dir, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => { out += d; stdout += d; });
  child.stderr!.on('data', (d: Buffer) => (out += d));
  return { child, output: () => out, stdout: () => stdout, exited: once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string) };
}

describe('a faas-js-runtime TypeScript project, with faas-js-runtime swapped for this package', () => {
  it('type-checks with strict tsc against the installed package', async () => {
    const tsc = run(process.execPath, [TSC, '-p', '.']);
    expect(await tsc.exited, tsc.output()).toBe(0);
  });

  it('passes its own test (start() with InvokerOptions, in-process)', async () => {
    const test = run('npm', ['test']);
    expect(await test.exited, test.output()).toBe(0);
    expect(test.output()).toContain('faas-project: all checks passed');
  });

  it('`npm start` (faas-js-runtime ./build/src/index.js) serves it, in compatibility mode, until SIGTERM', async () => {
    const port = await freePort();
    const started = run('npm', ['start'], { PORT: String(port) });
    const body = await until('the function to answer', () => fetch(`http://127.0.0.1:${port}/?name=ada`).then((r) => r.text(), () => undefined));
    expect(body).toBe('Hello, ada!');
    // stderr arrives on its own pipe: wait for the line rather than race the reply.
    await until('the start-up line', () => (/serving build\/src\/index\.js at http:\/\/localhost:\d+ \(log level warn, faas-js-runtime compatibility mode/.test(started.output()) ? true : undefined));
    process.kill(-started.child.pid!, 'SIGTERM');
    await started.exited;
    // npm may exit before the server it started has finished its drain: wait for the port to close.
    expect(await until('the server to stop', () => fetch(`http://127.0.0.1:${port}/`).then(() => undefined, () => 'stopped'))).toBe('stopped');
  });

  it('a CloudEventFunction receives the whole event from `faas-js-runtime ./build/src/events.js`', async () => {
    const port = await freePort();
    run('npm', ['run', 'start:events'], { PORT: String(port) });
    const message = HTTP.binary(new CloudEvent({ source: '/sensors/1', type: 'reading.taken', data: { sensor: 's1', celsius: 0 } }));
    const res = await until('the function to answer', () => fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string }).catch(() => undefined));
    expect(res.status).toBe(200);
    expect(res.headers.get('ce-source')).toBe('/thermometer/converter');
    expect(await res.json()).toEqual({ sensor: 's1', fahrenheit: 32 });
  });

  it('the faas-js-runtime command takes faas-js-runtime\'s flags and answers --version and bad usage', async () => {
    const bin = join(dir, 'node_modules', '.bin', 'faas-js-runtime');
    const version = run(bin, ['--version']);
    expect(await version.exited).toBe(0);
    expect(version.stdout().trim()).toMatch(/^\d+\.\d+\.\d+$/);
    // Projects' debug scripts run it by faas-js-runtime's own path: node ./node_modules/faas-js-runtime/bin/cli.js.
    const byPath = run(process.execPath, [join(dir, 'node_modules', 'faas-js-runtime', 'bin', 'cli.js'), '--version']);
    expect([await byPath.exited, byPath.stdout().trim()]).toEqual([0, version.stdout().trim()]);
    const missing = run(bin, ['--port', '1234']);
    expect(await missing.exited).toBe(2);
    expect(missing.output()).toMatch(/missing required argument 'file'/);
    const port = await freePort();
    const flags = run(bin, ['./build/src/index.js', '--port', String(port), '--log-level', 'info', '--include-raw', '--bodyLimit', '10']);
    await until('the function to answer', () => fetch(`http://127.0.0.1:${port}/?name=x`).then((r) => r.text(), () => undefined));
    const tooLarge = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'more than ten bytes' });
    expect(tooLarge.status).toBe(413);
    expect(flags.output()).toMatch(/"level":30/);
  });
});
