/** The built CLI as a user runs it: loading, exit codes, signals, crashes and logs. */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { inContainer } from '../src/listen-host.js';
import { fixture, runCli, runCliToExit, type Running } from './helpers/cli.js';

let running: Running | undefined;
afterEach(async () => {
  if (running && running.child.exitCode === null) await running.stop('SIGKILL');
  running = undefined;
});

const launch = async (args: string[], env?: Record<string, string>) => (running = await runCli(args, env));
const logLines = (text: string) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

describe('loading', () => {
  it.each([
    ['cjs', '/', '{"module":"cjs","method":"GET"}'],
    ['esm-default', '/p', 'esm default /p'],
    ['esm-named', '/?a=1', '{"module":"esm","data":null,"query":{"a":"1"}}'],
    ['ts', '/?name=ts', 'Hello, ts!'],
    ['ts/src/index.ts', '/', 'Hello, ts!'],
    ['esm-default/index.mjs', '/', 'esm default /'],
  ])('serves %s', async (dir, path, body) => {
    const r = await launch([fixture(dir)]);
    expect(await fetch(r.url + path).then((res) => res.text())).toBe(body);
  });

  it.each([
    ['syntax-error', /syntax error at .*syntax-error\/index\.mjs:3:1: Unexpected token.*Fix the source at that line/],
    ['missing-dep', /imports "left-pad-that-is-not-installed", which cannot be found.*npm install/],
    ['no-handle', /has no `handle` function \(it exports hello, other\)\. Export one/],
    ['does-not-exist', /No function at .*does-not-exist: the path does not exist/],
    ['bad-yaml', /func\.yaml is not valid YAML/],
  ])('%s: one clear paragraph and a non-zero exit', async (name, message) => {
    const { code, stderr } = await runCliToExit([fixture(name)]);
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('rejects a bad option naming its source', async () => {
    const { code, stderr } = await runCliToExit([fixture('cjs')], { FUNC_LOG_LEVEL: 'chatty' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/FUNC_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "chatty"/);
  });

  it('rejects an unknown flag with usage help', async () => {
    const { code, stderr } = await runCliToExit([fixture('cjs'), '--no-such-flag']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/Unknown argument/);
  });

  it('reports a port in use', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, stderr } = await runCliToExit([fixture('cjs'), '--port', String(port), '--host', '127.0.0.1']);
      expect(code).toBe(1);
      expect(stderr).toMatch(new RegExp(`Port ${port} is already in use`));
      if (process.platform === 'linux') expect(stderr).toContain(`by pid ${process.pid} (`);
    } finally {
      blocker.close();
    }
  });

  const answers = (url: string): Promise<boolean> => fetch(url).then(() => true, () => false);

  it('in a pod (K_SERVICE) listens on every address', async () => {
    const r = await runCli([fixture('cjs')], { K_SERVICE: 'hello' }, {});
    try {
      const port = new URL(r.url).port;
      expect(await answers(`http://127.0.0.2:${port}/`)).toBe(true);
    } finally {
      await r.stop();
    }
  });

  it.runIf(!inContainer({}))('on a developer\'s machine listens on the loopback address only', async () => {
    const r = await runCli([fixture('cjs')], { K_SERVICE: '', KUBERNETES_SERVICE_HOST: '' }, {});
    try {
      const port = new URL(r.url).port;
      expect(await answers(`http://127.0.0.1:${port}/`)).toBe(true);
      expect(await answers(`http://127.0.0.2:${port}/`)).toBe(false);
    } finally {
      await r.stop();
    }
  });

  it('a TypeScript error\'s stack names the .ts line', async () => {
    const r = await launch([fixture('ts-throws')]);
    const res = await fetch(r.url);
    expect(res.status).toBe(500);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const failure = logLines(r.stdout()).find((l) => l.msg === 'function failed') as { err: { stack: string } };
    expect(failure.err.stack).toMatch(/ts-throws\/src\/index\.ts:7:\d+/);
  });

  it('reads health paths from func.yaml deploy.healthEndpoints', async () => {
    const r = await launch([fixture('yaml-health')]);
    expect(await fetch(`${r.url}/probe/live`).then((x) => x.text())).toBe('OK');
    expect(await fetch(`${r.url}/probe/ready`).then((x) => x.text())).toBe('OK');
    expect(await fetch(`${r.url}/health/readiness`).then((x) => x.text())).toBe('function');
  });

  it('LIVENESS_URL / READINESS_URL override func.yaml', async () => {
    const r = await launch([fixture('yaml-health')], { LIVENESS_URL: '/env/live', READINESS_URL: '/env/ready' });
    expect(await fetch(`${r.url}/env/live`).then((x) => x.text())).toBe('OK');
    expect(await fetch(`${r.url}/env/ready`).then((x) => x.text())).toBe('OK');
  });
});

describe('first contact', () => {
  it('prints one line on start, whatever the level: where it listens, what it serves, the log level', async () => {
    const r = await launch([fixture('esm-default')], { FUNC_LOG_LEVEL: 'warn' });
    await until(() => r.stderr().includes('\n'));
    expect(r.stderr()).toMatch(/^func-runtime: serving .*esm-default\/index\.mjs at http:\/\/127\.0\.0\.1:\d+ \(log level warn; Ctrl-C stops\)\n$/);
    // stdout stays one JSON object per line for log collectors.
    expect(r.stdout()).toBe('');
  });

  it('prints nothing when the level is silent', async () => {
    const r = await launch([fixture('esm-default')], { FUNC_LOG_LEVEL: 'silent' });
    expect(await fetch(r.url).then((x) => x.status)).toBe(200);
    // The line would have been written before the first request was accepted; give its pipe time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.stderr()).toBe('');
  });
});

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
}

describe('lifecycle', () => {
  it('SIGTERM: readiness 503, in-flight requests finish, shutdown runs, exit 0', async () => {
    const r = await launch([fixture('slow')]);
    const inflight = fetch(`${r.url}/?ms=600`).then(async (res) => [res.status, await res.text()]);
    await new Promise((resolve) => setTimeout(resolve, 150));
    r.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await inflight).toEqual([200, 'slept 600']);
    expect(await r.exit()).toBe(0);
    const out = r.stdout();
    expect(out.indexOf('fixture shutdown called')).toBeGreaterThan(out.indexOf('"msg":"shutting down"'));
    expect(out).toMatch(/"msg":"stopped"/);
  });

  it('readiness answers 503 while draining', async () => {
    const r = await launch([fixture('slow')]);
    // Hold one keep-alive connection so the readiness probe can reach the draining server.
    const inflight = fetch(`${r.url}/?ms=800`);
    const agentProbe = () => fetch(`${r.url}/health/readiness`).then((x) => x.status).catch(() => 'refused');
    expect(await agentProbe()).toBe(200);
    r.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const probe = await agentProbe();
    expect([503, 'refused']).toContain(probe);
    await inflight;
    expect(await r.exit()).toBe(0);
  });

  it('the shutdown timeout bounds the wait; a drain cut short exits 1', async () => {
    const r = await launch([fixture('slow'), '--shutdown-timeout', '200']);
    const inflight = fetch(`${r.url}/?ms=5000`).then((x) => x.status).catch(() => 'cut');
    await new Promise((resolve) => setTimeout(resolve, 100));
    r.child.kill('SIGTERM');
    expect(await r.exit()).toBe(1);
    // Cut, not answered after its 5 s: the bound held.
    expect(await inflight).toBe('cut');
    expect(r.stdout()).toMatch(/shutdown timeout reached/);
  });

  it('a second signal exits at once with 1', async () => {
    const r = await launch([fixture('slow')]);
    const inflight = fetch(`${r.url}/?ms=5000`).catch(() => 'cut');
    await new Promise((resolve) => setTimeout(resolve, 100));
    r.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 100));
    r.child.kill('SIGINT');
    expect(await r.exit()).toBe(1);
    expect(await inflight).toBe('cut');
    expect(r.stdout()).toMatch(/second signal: exiting now/);
  });

  it.each([
    ['a timer exception', '/', /uncaught exception escaped the function/, /timer exception from fixture/],
    ['an unawaited rejection', '/?mode=reject', /unhandled promise rejection escaped the function/, /unawaited rejection from fixture/],
  ])('%s is logged at fatal with its stack and exits non-zero', async (_name, path, msg, stack) => {
    const r = await launch([fixture('crash')]);
    await fetch(r.url + path).catch(() => undefined);
    expect(await r.exit()).toBe(1);
    const fatal = logLines(r.stdout()).find((l) => l.level === 60) as { msg: string; err: { stack: string } };
    expect(fatal.msg).toMatch(msg);
    expect(fatal.err.stack).toMatch(stack);
    expect(fatal.err.stack).toMatch(/crash\/index\.mjs:\d+/);
  });
});

describe('logging', () => {
  it('one JSON object per line with level, time, pid, hostname, reqId, msg; never the Authorization header', async () => {
    const r = await launch([fixture('cjs')]);
    await fetch(r.url, { headers: { authorization: 'Bearer top-secret-token', cookie: 'sid=also-secret', 'x-request-id': 'req-42' } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const out = r.stdout();
    expect(out).not.toMatch(/top-secret-token|also-secret/);
    const lines = logLines(out);
    const completed = lines.find((l) => l.msg === 'request completed')!;
    expect(completed).toMatchObject({ level: 30, reqId: 'req-42', pid: expect.any(Number), hostname: expect.any(String), time: expect.any(Number) });
  });

  it('health probes do not flood the log', async () => {
    const r = await launch([fixture('cjs')]);
    for (let i = 0; i < 5; i++) await fetch(`${r.url}/health/liveness`);
    await fetch(r.url);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lines = logLines(r.stdout());
    expect(lines.filter((l) => l.msg === 'request completed')).toHaveLength(1);
  });

  it('honours the logLevel member of a Function object', async () => {
    const r = await launch([fixture('function-object')], { FUNC_LOG_LEVEL: '' });
    await fetch(r.url);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(logLines(r.stdout()).some((l) => l.level === 20 && l.msg === 'handling')).toBe(true);
  });

  it('the default level (warn) prints nothing for a successful request', async () => {
    const r = await launch([fixture('cjs')], { FUNC_LOG_LEVEL: '' });
    expect(await fetch(r.url).then((x) => x.status)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(logLines(r.stdout())).toEqual([]);
  });

  it('silent prints nothing even for a failure', async () => {
    const r = await launch([fixture('ts-throws')], { FUNC_LOG_LEVEL: 'silent' });
    expect(await fetch(r.url).then((x) => x.status)).toBe(500);
    expect(r.stdout()).toBe('');
  });
});
