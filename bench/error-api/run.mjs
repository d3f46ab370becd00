// `npm run bench:error-api`: authenticated GETs against the error-api, next to the runtime's
// hello-world and to the same service with its token check stubbed out, all served by func-runtime
// in one run. Prints a markdown table; the auth cost column is 1 − (req/s with auth ÷ req/s without).
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { runLoad, wrkAvailable, wrkVersion } from '../runtime/load.mjs';
import { loadAverage, machineInfo, runtimeCommit } from '../runtime/machine.mjs';
import { SERVER_CPU, cpuSeconds, freePort, installCleanup, killAll, pinSelf, spawnPinned, stop, waitForReply } from '../runtime/procs.mjs';
import { median } from '../lib/stats.mjs';
import { verifyCostUs } from './verify.mjs';

const root = new URL('../../', import.meta.url).pathname;
const say = (msg) => process.stderr.write(`${msg}\n`);
const AUDIENCE = 'error-api';
const ISSUER = 'https://bench.local';

const { values: opts } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    loader: { type: 'string', default: wrkAvailable() ? 'wrk' : 'autocannon' },
    'max-seconds': { type: 'string', default: '300' },
  },
});
const seconds = Number(opts.seconds);
const rounds = Number(opts.rounds);
const connections = Number(opts.connections);

/** Keys and tokens for the two verification paths: HS256 secret and RS256 PEM public key. */
const keys = async (dir) => {
  const secret = 'bench-secret-bench-secret-bench-secret!';
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pemFile = join(dir, 'public.pem');
  writeFileSync(pemFile, rsa.publicKey.export({ type: 'spki', format: 'pem' }));
  const token = (alg, key) =>
    new SignJWT({ scope: 'errors:read' })
      .setProtectedHeader({ alg })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime('1h')
      .sign(key);
  return {
    hs: { env: { ERROR_API_JWT_SECRET: secret }, token: await token('HS256', new TextEncoder().encode(secret)) },
    rs: { env: { ERROR_API_JWT_PUBLIC_KEY_FILE: pemFile }, token: await token('RS256', rsa.privateKey) },
  };
};

const servers = (k) => {
  const api = { path: 'packages/error-api', route: '/api/v1/error/not_found' };
  const claims = { ERROR_API_JWT_ISSUER: ISSUER, ERROR_API_JWT_AUDIENCE: AUDIENCE };
  return [
    { id: 'hello', label: 'hello-world (examples/hello)', path: 'examples/hello', route: '/', env: {}, token: undefined },
    { id: 'stub', label: 'error-api, token check stubbed', path: 'bench/error-api/stub-auth.mjs', route: api.route, env: {}, token: k.hs.token },
    { id: 'hs', label: 'error-api, HS256 token', ...api, env: { ...claims, ...k.hs.env }, token: k.hs.token },
    {
      id: 'hs-uncached',
      label: 'error-api, HS256 token, token cache off',
      ...api,
      env: { ...claims, ...k.hs.env, ERROR_API_TOKEN_CACHE_SECONDS: '0' },
      token: k.hs.token,
    },
    { id: 'rs', label: 'error-api, RS256 token (PEM key)', ...api, env: { ...claims, ...k.rs.env }, token: k.rs.token },
  ];
};

const launch = async (server) => {
  const port = await freePort();
  const env = { ...process.env, ...server.env, FUNC_LOG_LEVEL: 'warn' };
  const child = spawnPinned(SERVER_CPU, ['packages/runtime/dist/cli.js', server.path, '--port', String(port), '--host', '127.0.0.1'], { env, cwd: root });
  const headers = server.token ? { authorization: `Bearer ${server.token}` } : {};
  const ready = await waitForReply(child, port, { path: server.route, headers }, 20_000, (res) => res.status === 200);
  if (!ready.ok) throw new Error(`${server.label}: ${ready.reason}`);
  return { ...server, port, child, scenario: { method: 'GET', path: server.route, headers } };
};

/** One load round; CPU time too, since on a shared machine wall-clock req/s swings with neighbours. */
const load = async (s) => {
  const cpu0 = cpuSeconds(s.child.pid);
  const r = await runLoad(opts.loader, { port: s.port, scenario: s.scenario, bodyFile: '', connections, seconds });
  return { ...r, reqPerCpuS: r.requests / (cpuSeconds(s.child.pid) - cpu0) };
};

const measure = async (running) => {
  const samples = Object.fromEntries(running.map((s) => [s.id, []]));
  for (const s of running) await runLoad(opts.loader, { port: s.port, scenario: s.scenario, bodyFile: '', connections, seconds: 1 });
  for (let r = 1; r <= rounds; r++) {
    for (const s of running) {
      const result = await load(s);
      // A non-2xx means the bench measures the wrong thing; socket errors (timeouts on a loaded machine) are reported.
      if (result.non2xx) throw new Error(`${s.label}: ${result.non2xx} non-2xx responses`);
      samples[s.id].push(result);
      say(`round ${r}/${rounds} ${s.label}: ${Math.round(result.rps)} req/s, p99 ${result.p99Ms.toFixed(1)} ms, ${Math.round(result.reqPerCpuS)} req/CPU-s`);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([id, xs]) => [
      id,
      {
        rps: median(xs.map((x) => x.rps)),
        p99Ms: median(xs.map((x) => x.p99Ms)),
        reqPerCpuS: median(xs.map((x) => x.reqPerCpuS)),
        errors: xs.reduce((n, x) => n + x.errors, 0),
      },
    ]),
  );
};

const pct = (x) => `${(x * 100).toFixed(1)} %`;

const table = (running, m) => {
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const lines = [
    '| server (func-runtime) | GET | req/s | p99 ms | req per server CPU-s | vs hello-world (req/s) | auth cost (CPU) | auth cost (req/s) | socket errors |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of running) {
    const { rps, p99Ms, reqPerCpuS, errors } = m[s.id];
    const authed = s.id !== 'hello' && s.id !== 'stub';
    const costs = authed ? `${pct(1 - reqPerCpuS / m.stub.reqPerCpuS)} | ${pct(1 - rps / m.stub.rps)}` : ' | ';
    lines.push(`| ${s.label} | \`${s.route}\` | ${fmt(rps)} | ${p99Ms.toFixed(1)} | ${fmt(reqPerCpuS)} | ${(rps / m.hello.rps).toFixed(2)}× | ${costs} | ${errors} |`);
  }
  return lines.join('\n');
};

/** CPU µs per token check, with and without the cache, next to the stubbed server's CPU µs per request. */
const verifyTable = async (k, m) => {
  const claims = { ERROR_API_JWT_ISSUER: ISSUER, ERROR_API_JWT_AUDIENCE: AUDIENCE };
  const perRequestUs = 1e6 / m.stub.reqPerCpuS;
  const lines = [
    `| token check, in process | CPU µs per check | share of a request's CPU (${perRequestUs.toFixed(0)} µs without auth) |`,
    '|---|--:|--:|',
  ];
  for (const [label, key] of [['HS256', k.hs], ['RS256 (PEM)', k.rs]]) {
    for (const cache of [0, 60]) {
      const us = await verifyCostUs({ ...claims, ...key.env }, key.token, cache);
      lines.push(`| ${label}, ${cache ? 'cached (repeated token)' : 'cache off'} | ${us.toFixed(1)} | ${pct(us / (perRequestUs + us))} |`);
    }
  }
  return lines.join('\n');
};

const main = async () => {
  installCleanup();
  if (!pinSelf()) say('bench: taskset unavailable; numbers are not pinned to cores');
  setTimeout(() => {
    say('bench: exceeded --max-seconds; stopping');
    killAll('SIGKILL');
    process.exit(124);
  }, Number(opts['max-seconds']) * 1000).unref();
  const dir = mkdtempSync(join(tmpdir(), 'error-api-bench-'));
  const running = [];
  try {
    const k = await keys(dir);
    for (const s of servers(k)) running.push(await launch(s));
    const loadBefore = loadAverage();
    const m = await measure(running);
    const mach = machineInfo();
    process.stdout.write(
      `### error-api load (${new Date().toISOString()})\n\n` +
        `Machine: ${mach.cpuModel}, ${mach.cores} cores, ${mach.memGiB} GiB RAM, Linux ${mach.kernel}, Node ${mach.node}; ` +
        `load average ${loadBefore} before, ${loadAverage()} after. func-runtime at ${runtimeCommit(root)}.\n` +
        `Load: ${opts.loader === 'wrk' ? wrkVersion() : 'autocannon'}, ${connections} connections, ${rounds} interleaved rounds of ` +
        `${seconds} s after a 1 s warm-up per server, medians; servers pinned to core 0, load generator to core 1.\n\n` +
        `${table(running, m)}\n\n${await verifyTable(k, m)}\n`,
    );
  } finally {
    await Promise.all(running.map((s) => stop(s.child)));
    rmSync(dir, { recursive: true, force: true });
  }
};

main().catch((err) => {
  say(`bench: ${err.message}`);
  killAll('SIGKILL');
  process.exit(1);
});
