/**
 * Compatibility with Knative's Node.js runtime, faas-js-runtime@4: one row per behaviour, run
 * against both runtimes. `same` rows assert an identical observable result. `differs` rows are the
 * places we deliberately part ways; each says why and asserts both sides, so a change on either
 * side is noticed.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, fixture } from './helpers/cli.js';
import { ceHeaders, differences } from './helpers/differences.js';
import { closeServers, freePort, get, observe, observeRow, post, serveWith, type AnyFn, type Observation } from './helpers/peers.js';

afterEach(closeServers);

interface Row {
  name: string;
  fn: AnyFn;
  send: (url: string) => Promise<Response>;
  headers?: string[];
  /** Compare only part of the observation (e.g. status) when the rest is each runtime's own. */
  pick?: (o: Observation) => unknown;
}

/**
 * faas-js-runtime's probes answer 503 whenever its overload-protection sees event-loop delay, which
 * a shared test machine produces at random; ask again so the row compares the healthy answer.
 */
const probe = (path: string) => async (url: string) => {
  for (let i = 0; ; i++) {
    const res = await fetch(url + path);
    if (res.status !== 503 || i === 20) return res;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 100));
  }
};
const withPath = (fn: () => unknown, path: string) => Object.assign(fn, { path });

const same: Row[] = [
  { name: 'string return → 200 text/plain', fn: () => 'hello', send: get() },
  { name: 'object return → JSON', fn: () => ({ a: 1, b: [true] }), send: get() },
  { name: 'undefined return → 204', fn: () => undefined, send: get(), pick: (o) => [o.status, o.body] },
  { name: '{ statusCode, headers, body } used as given', fn: () => ({ statusCode: 201, headers: { 'X-Custom': 'v' }, body: { made: true } }), send: get(), headers: ['x-custom'] },
  { name: 'async handle', fn: async () => 'later', send: get() },
  { name: 'context.query', fn: (c: { query: unknown }) => ({ q: c.query }), send: get('/?a=1&b=two') },
  { name: 'JSON body → context.body and the second argument', fn: (c: { body: unknown }, d: unknown) => ({ body: c.body, data: d }), send: post('{"n":[1,2]}', { 'content-type': 'application/json' }) },
  { name: 'urlencoded body → object', fn: (c: { body: unknown }) => ({ body: c.body }), send: post('a=1&b=2', { 'content-type': 'application/x-www-form-urlencoded' }) },
  { name: 'method, httpVersion and headers', fn: (c: { method: string; httpVersion: string; headers: Record<string, string> }) => ({ m: c.method, v: c.httpVersion, h: c.headers['x-h'] }), send: get('/', { 'x-h': 'yes' }) },
  { name: 'thrown error with a numeric code in 400–599 → that status', fn: () => { throw Object.assign(new Error('teapot'), { code: 418 }); }, send: get(), pick: (o) => o.status },
  { name: 'thrown plain error → 500', fn: () => { throw new Error('x'); }, send: get(), pick: (o) => o.status },
  { name: 'CORS: every origin allowed by default', fn: () => 'x', send: get('/', { origin: 'https://a.example' }), headers: ['access-control-allow-origin', 'access-control-allow-methods'] },
  { name: 'CORS preflight → 204', fn: () => 'x', send: (url) => fetch(`${url}/`, { method: 'OPTIONS', headers: { origin: 'https://a.example', 'access-control-request-method': 'POST' } }), headers: ['access-control-allow-origin', 'access-control-allow-methods'], pick: (o) => [o.status, o.headers] },
  { name: 'cors() restricts the allowed origin', fn: { handle: () => 'x', cors: () => ['https://ok.example'] }, send: get('/', { origin: 'https://ok.example' }), headers: ['access-control-allow-origin'], pick: (o) => o.headers },
  { name: 'liveness → 200 OK', fn: () => 'x', send: probe('/health/liveness') },
  { name: 'readiness → 200 OK', fn: () => 'x', send: probe('/health/readiness') },
  { name: 'readiness path property', fn: { handle: () => 'x', readiness: withPath(() => 'READY', '/custom/ready') }, send: get('/custom/ready'), pick: (o) => [o.status, o.body] },
  { name: 'liveness path property', fn: { handle: () => 'x', liveness: withPath(() => 'ALIVE', '/custom/alive') }, send: get('/custom/alive'), pick: (o) => [o.status, o.body] },
  { name: 'binary CloudEvent → context.cloudevent', fn: (c: { cloudevent?: { id: string; type: string; source: string } }) => ({ id: c.cloudevent?.id, type: c.cloudevent?.type, source: c.cloudevent?.source }), send: post('{"x":1}', ceHeaders) },
  { name: 'structured CloudEvent → context.cloudevent', fn: (c: { cloudevent?: { id: string; data: unknown } }) => ({ id: c.cloudevent?.id, data: c.cloudevent?.data }), send: post('{"specversion":"1.0","id":"s-9","source":"/s","type":"t","data":{"k":"v"}}', { 'content-type': 'application/cloudevents+json' }) },
  {
    name: 'cloudEventResponse(...).response() → binary-mode event',
    fn: (c: { cloudEventResponse(d: unknown): { id(s: string): { source(s: string): { type(s: string): { response(): unknown } } } } }) => c.cloudEventResponse({ ok: true }).id('r-1').source('/reply').type('compat.reply').response(),
    send: post('{"x":1}', ceHeaders),
    headers: ['ce-id', 'ce-source', 'ce-type', 'ce-specversion'],
  },
  { name: 'malformed JSON → 400', fn: (_c: unknown, d: unknown) => ({ d }), send: post('{"a":', { 'content-type': 'application/json' }), pick: (o) => o.status },
  { name: 'body over 1 MiB → 413', fn: () => 'x', send: post('x'.repeat(1_048_577), { 'content-type': 'text/plain' }), pick: (o) => o.status },
  { name: 'metrics endpoint with faas_invocations', fn: () => 'x', send: async (url) => { await fetch(url); return fetch(`${url}/metrics`); }, pick: (o) => [o.status, /^faas_invocations\{/m.test(o.body), /^# TYPE faas_execution_latency histogram$/m.test(o.body), /^# TYPE faas_queue_latency histogram$/m.test(o.body)] },
];

describe('same behaviour as faas-js-runtime@4', () => {
  it.each(same.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    const results: unknown[] = [];
    for (const runtime of ['faas', 'ours'] as const) {
      const url = await serveWith(runtime, row.fn);
      const o = await observe(await row.send(url), row.headers);
      results.push(row.pick ? row.pick(o) : o);
    }
    expect(results[1]).toEqual(results[0]);
  });
});

describe('deliberate differences from faas-js-runtime@4 (FUNC_COMPAT=faas-js-runtime undoes most: compat-mode.test.ts)', () => {
  it.each(differences.map((r) => [r.name, r] as const))('%s', async (_name, row) => {
    expect(row.why.length).toBeGreaterThan(20);
    row.faas(await observeRow('faas', row));
    row.ours(await observeRow('ours', row));
  });
});

/** Process-level rows run each runtime's own CLI, as a user or the platform does. */
const FAAS_CLI = fileURLToPath(import.meta.resolve('faas-js-runtime/bin/cli.js'));

async function spawnCli(runtime: 'faas' | 'ours', file: string) {
  const port = await freePort();
  const cli = runtime === 'faas' ? FAAS_CLI : CLI;
  const extra = runtime === 'ours' ? ['--host', '127.0.0.1'] : [];
  const child = spawn(process.execPath, [cli, file, '--port', String(port), ...extra], { env: { ...process.env, FUNC_LOG_LEVEL: 'warn' } });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d));
  child.stderr.on('data', (d: Buffer) => (output += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  let up = false;
  while (!up && Date.now() < deadline && child.exitCode === null) {
    up = await fetch(`${url}/health/liveness`).then(() => true, () => false);
    if (!up) await new Promise((r) => setTimeout(r, 50));
  }
  const kill = () => { if (child.exitCode === null) child.kill('SIGKILL'); };
  return { child, url, up, exited, output: () => output, kill };
}

describe('process behaviour against faas-js-runtime@4\'s CLI', () => {
  it('an exception escaping the function: we exit non-zero, faas-js-runtime exits 0', async () => {
    for (const runtime of ['faas', 'ours'] as const) {
      const p = await spawnCli(runtime, `${fixture('crash')}/index.mjs`);
      expect(p.up).toBe(true);
      await fetch(`${p.url}/`).catch(() => undefined);
      const code = await Promise.race([p.exited, new Promise((r) => setTimeout(() => r('still running'), 5000))]);
      p.kill();
      expect(code).toBe(runtime === 'ours' ? 1 : 0);
    }
  });

  it('SIGTERM during a request: we finish it, faas-js-runtime cuts it', async () => {
    for (const runtime of ['faas', 'ours'] as const) {
      const p = await spawnCli(runtime, `${fixture('slow')}/index.mjs`);
      expect(p.up).toBe(true);
      const inflight = fetch(`${p.url}/?ms=700`).then((r) => r.status, () => 'cut');
      await new Promise((r) => setTimeout(r, 200));
      p.child.kill('SIGTERM');
      const status = await inflight;
      await p.exited;
      p.kill();
      expect(status).toBe(runtime === 'ours' ? 200 : 'cut');
    }
  });

  it('an .mjs with only `export default function`: we serve it, faas-js-runtime cannot', async () => {
    for (const runtime of ['faas', 'ours'] as const) {
      const p = await spawnCli(runtime, `${fixture('esm-default')}/index.mjs`);
      const status = p.up ? await fetch(`${p.url}/`).then((r) => r.status, () => 'down') : 'down';
      p.kill();
      if (runtime === 'ours') expect(status).toBe(200);
      else expect(status).not.toBe(200);
    }
  });
});
