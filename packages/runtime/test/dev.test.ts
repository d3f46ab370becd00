/**
 * `func-runtime dev` as a developer uses it: a real process, files edited on disk, the new
 * behaviour polled for over HTTP. No timing is asserted; every wait is bounded by a deadline.
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { copyFixture, freePort, killAll, spawnCli, text, until, type Proc } from './dev-helpers.js';

const cleanups: (() => void)[] = [];
afterEach(async () => {
  await killAll();
  for (const c of cleanups.splice(0)) c();
});

interface Session {
  dir: string;
  url: string;
  proc: Proc;
  write(rel: string, content: string): void;
  /** Polls GET path until the body equals `body`. */
  serves(body: string, path?: string): Promise<void>;
}

/** `prepare` may edit the fresh copy before dev starts and return the first answer it then expects. */
async function startDev(extraArgs: string[] = [], env: Record<string, string> = {}, prepare?: (dir: string) => string): Promise<Session> {
  const fx = copyFixture('dev-hooks');
  cleanups.push(fx.remove);
  const first = prepare?.(fx.dir) ?? 'v1';
  const port = await freePort();
  const proc = spawnCli(['dev', fx.dir, '--port', String(port), '--host', '127.0.0.1', ...extraArgs], {
    env: { ...process.env, HOOK_LOG: join(fx.dir, 'hooks.log'), ...env },
  });
  const url = `http://127.0.0.1:${port}`;
  // The first answer, not the log line, is the start: from then on no save may be missed.
  await until('dev to answer', async () => ((await text(url)) === first ? true : undefined));
  expect(proc.output()).toMatch(/serving .*index\.ts at http:\/\/127\.0\.0\.1:\d+ \(watching for changes\)/);
  return {
    dir: fx.dir,
    url,
    proc,
    write: (rel, content) => writeFileSync(join(fx.dir, rel), content),
    serves: async (body, path = '/') => { await until(`GET ${path} to answer ${body}`, async () => ((await text(url + path)) === body ? true : undefined)); },
  };
}

const hookLines = (dir: string): string[] => readFileSync(join(dir, 'hooks.log'), 'utf8').trim().split('\n');
const version = (v: string) => `export const version: string = '${v}';\n`;

/** GET through a keep-alive agent; resolves with the body and the client port of the connection used. */
function getOnSocket(agent: Agent, url: string): Promise<{ body: string; localPort: number }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d));
      res.on('end', () => resolve({ body, localPort: req.socket!.localPort! }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('func-runtime dev', () => {
  it('serves TypeScript source, reloads on save of a local import, keeps the connection, runs hooks in order', async () => {
    const s = await startDev();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await getOnSocket(agent, s.url);
      expect(before.body).toBe('v1');
      expect(await text(`${s.url}/?where`)).toBe(pathToFileURL(join(s.dir, 'src/index.ts')).href);
      // An in-flight request started on v1 must finish on v1 after the swap.
      const slow = fetch(`${s.url}/?wait=1500`).then((r) => r.text());
      await until('the slow request to be in flight', () => (hookLines(s.dir).includes('request v1') ? true : undefined));
      s.write('src/version.ts', version('v2'));
      await s.serves('v2');
      expect(await slow).toBe('v1');
      const after = await getOnSocket(agent, s.url);
      expect(after).toEqual({ body: 'v2', localPort: before.localPort });
      expect(s.proc.output()).toMatch(/reloaded in \d+ ms \(src\/version\.ts\)/);
      const hooks = await until('the old version to shut down', () => {
        const lines = hookLines(s.dir);
        return lines.includes('shutdown v1') ? lines : undefined;
      });
      expect(hooks.filter((l) => !l.startsWith('request'))).toEqual(['init v1', 'init v2', 'shutdown v1']);
    } finally {
      agent.destroy();
    }
    expect(await s.proc.stop('SIGTERM')).toBe(0);
    expect(hookLines(s.dir).at(-1)).toBe('shutdown v2');
  });

  it('keeps the last good version on a syntax or load error, logs file:line:column, reports stale readiness, recovers', async () => {
    const s = await startDev();
    expect(await text(s.url)).toBe('v1');
    s.write('src/version.ts', `/** broken */\nexport const version: string = 'v2' +;\n`);
    const [line] = await s.proc.waitFor(/^.*src\/version\.ts:2:\d+: .*$/m);
    expect(line).toMatch(/ERROR.*src\/version\.ts:2:\d+: Unexpected ";" \(still serving the last good version\)/);
    expect(await text(s.url)).toBe('v1');
    const ready = await fetch(`${s.url}/health/readiness`);
    expect(ready.status).toBe(503);
    expect(await ready.text()).toMatch(/^Stale: src\/version\.ts:2:\d+: Unexpected ";"/);
    expect((await fetch(`${s.url}/health/liveness`)).status).toBe(200);

    s.write('src/version.ts', version('v3'));
    await s.serves('v3');
    expect((await fetch(`${s.url}/health/readiness`)).status).toBe(200);

    // A module whose top-level code throws: reported at its .ts line, v3 keeps serving.
    s.write('src/version.ts', `export const version: string = 'v4';\nthrow new Error('config missing');\n`);
    await s.proc.waitFor(/src\/version\.ts:2:\d+: Error: config missing \(still serving/);
    expect(await text(s.url)).toBe('v3');
    // Undoing the edit restores exactly the serving code: no swap, and no longer stale.
    s.write('src/version.ts', version('v3'));
    await s.proc.waitFor(/back to the serving version \(src\/version\.ts\)/);
    expect((await fetch(`${s.url}/health/readiness`)).status).toBe(200);
    expect(hookLines(s.dir)).toEqual(['init v1', 'init v3', 'shutdown v1']);
  });

  it('follows .env and func.yaml; a malformed func.yaml keeps the last good version', async () => {
    const s = await startDev();
    s.write('.env', 'GREETING=hello from .env\n');
    await s.serves('v1 hello from .env');
    appendFileSync(join(s.dir, 'func.yaml'), 'build: [unclosed\n');
    await s.proc.waitFor(/func\.yaml.*not valid YAML.*\(still serving/);
    expect(await text(s.url)).toBe('v1 hello from .env');
    expect((await fetch(`${s.url}/health/readiness`)).status).toBe(503);
    s.write('func.yaml', 'specVersion: 0.36.0\nname: dev-hooks\n');
    await until('readiness to recover', async () => ((await fetch(`${s.url}/health/readiness`)).status === 200 ? true : undefined));
    s.write('.env', '');
    await s.serves('v1');
  });

  it('never loses a save made right after a reload; --json logs one JSON object per line', async () => {
    const s = await startDev(['--json']);
    for (let i = 2; i <= 7; i++) {
      s.write('src/version.ts', version(`v${i}`));
      await s.serves(`v${i}`);
    }
    const lines = (await s.proc.waitFor(/reloaded in/)) && s.proc.output().trim().split('\n');
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const reload = records.find((r) => String(r.msg).startsWith('reloaded in'));
    expect(reload).toMatchObject({ name: 'dev', changed: 'src/version.ts' });
    expect(typeof reload!.ms).toBe('number');
    expect(records.find((r) => String(r.msg).startsWith('serving'))).toMatchObject({ url: s.url });
    // Dev logs at info by default, so the function's request logs show.
    expect(records.some((r) => r.level === 30 && r.reqId !== undefined)).toBe(true);
  });

  it('applies func.yaml run.envs as environment defaults; the real environment wins', async () => {
    const yaml = 'specVersion: 0.36.0\nname: dev-hooks\nrun:\n  envs:\n    - name: GREETING\n      value: from func.yaml\n';
    const s = await startDev([], {}, (dir) => (writeFileSync(join(dir, 'func.yaml'), yaml), 'v1 from func.yaml'));
    expect(await text(s.url)).toBe('v1 from func.yaml');
    const t = await startDev([], { GREETING: 'from the shell' }, (dir) => (writeFileSync(join(dir, 'func.yaml'), yaml), 'v1 from the shell'));
    expect(await text(t.url)).toBe('v1 from the shell');
  });

  it.each([
    ['a path that does not exist', ['dev', '/nonexistent/fn'], /No function at \/nonexistent\/fn: the path does not exist/],
    ['a port that is not a number', ['dev', '.', '--port', 'eighty'], /--port must be an integer/],
  ])('refuses %s with one line and exit 1', async (_name, args, message) => {
    const fx = copyFixture('dev-hooks');
    cleanups.push(fx.remove);
    const proc = spawnCli(args, { cwd: fx.dir });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(message);
    expect(proc.output().trim().split('\n')).toHaveLength(1);
  });

  it('refuses to start on a broken function with the location and a non-zero exit', async () => {
    const fx = copyFixture('dev-hooks');
    cleanups.push(fx.remove);
    writeFileSync(join(fx.dir, 'src/version.ts'), `export const version = ;\n`);
    const proc = spawnCli(['dev', fx.dir, '--port', String(await freePort())]);
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toMatch(/^func-runtime: Cannot start .*index\.ts: src\/version\.ts:1:\d+: Unexpected ";"\. Fix it/);
    expect(proc.output()).not.toMatch(/\n\s+at /);
  });
});
