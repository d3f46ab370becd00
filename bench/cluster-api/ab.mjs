// Before/after on a machine whose speed swings: every build runs at once (each pinned to the same core,
// idle while another is driven) and short bursts of requests alternate between them, so a slow minute
// hits every build alike. Prints server CPU per request (from /proc) and its ratio to the first build.
//
//   node bench/cluster-api/ab.mjs [--mode get|create] [--bursts 12] [--burst 4000] [--viewer] BUILD...
//   BUILD: path/to/dist/cli.js, or ENV=value,...@path/to/dist/cli.js (NODE_FLAGS=... passes node flags), or bare
//   --viewer: GETs as a token-file user who is not system:masters, bound to `view` in the bench
//   namespace, so every GET goes through RBAC's rules (the admin is allowed before RBAC is asked).
//   The cost of authorization: --viewer CLUSTER_API_AUTHORIZATION_MODE=AlwaysAllow@dist/cli.js dist/cli.js
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { httpClient } from './http-client.mjs';
import { cpuMs } from '../lib/process.mjs';
import { canPin, inParallel, podBody, startServer } from './server.mjs';

const { values: opts, positionals: builds } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: 'string', default: 'get' },
    bursts: { type: 'string', default: '12' },
    burst: { type: 'string', default: '4000' },
    pods: { type: 'string', default: '2000' },
    clients: { type: 'string', default: '50' },
    'server-cpu': { type: 'string', default: '0' },
    'max-seconds': { type: 'string', default: '900' },
    viewer: { type: 'boolean', default: false },
  },
});
const AdminToken = 'bench-admin-token';
const ViewerToken = 'bench-viewer-token';
if (builds.length === 0 || !['get', 'create'].includes(opts.mode)) {
  process.stderr.write('usage: node bench/cluster-api/ab.mjs [--mode get|create] [--bursts N] [--burst N] BUILD...\n');
  process.exit(2);
}
const [BURSTS, BURST, PODS, CLIENTS] = [opts.bursts, opts.burst, opts.pods, opts.clients].map(Number);
const children = new Set();
setTimeout(() => {
  process.stderr.write(`ab: exceeded --max-seconds ${opts['max-seconds']}; stopping\n`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(124);
}, Number(opts['max-seconds']) * 1000).unref();

async function start(spec) {
  const at = spec.lastIndexOf('@');
  const [settings, cli] = at < 0 ? ['', spec] : [spec.slice(0, at), spec.slice(at + 1)];
  const env = { ...process.env };
  for (const kv of settings.split(',').filter(Boolean)) env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  const dir = mkdtempSync(join(tmpdir(), 'cluster-api-ab-'));
  const viewer = opts.viewer && cli !== 'bare';
  if (viewer) {
    writeFileSync(join(dir, 'tokens.csv'), `${AdminToken},admin,admin,system:masters\n${ViewerToken},viewer,viewer,viewers\n`);
    env.CLUSTER_API_TOKEN_AUTH_FILE = join(dir, 'tokens.csv');
  }
  const server = await startServer({
    cli, storage: cli === 'bare' ? 'bare' : `sqlite:${join(dir, 'api.db')}`, dataDir: join(dir, 'data'), env, children,
    nodeFlags: (env.NODE_FLAGS ?? '').split(' ').filter(Boolean), cpu: canPin(opts['server-cpu']) ? opts['server-cpu'] : undefined,
    ...(viewer && { token: AdminToken }),
  });
  const http = httpClient(server.url, { token: server.token, connections: CLIENTS });
  if (cli !== 'bare') await http('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } }));
  const reader = viewer ? await viewerClient(server, http) : http;
  return { spec, dir, server, http, reader, written: 0, cpuMs: 0, ms: 0, n: 0 };
}

/** A client as the viewer, once its `view` binding in the bench namespace is in effect. */
async function viewerClient(server, http) {
  const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'viewers' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'viewers' }] };
  const made = await http('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/bench/rolebindings', JSON.stringify(binding));
  // 404: a build from before RBAC, where any authenticated user may read.
  if (made.status !== 201 && made.status !== 404) throw new Error(`binding the viewer: HTTP ${made.status}`);
  const reader = httpClient(server.url, { token: ViewerToken, connections: CLIENTS });
  for (let i = 0; (await reader('GET', '/api/v1/namespaces/bench/pods?limit=1')).status !== 200; i++) {
    if (i > 200) throw new Error('the viewer binding was not in effect');
    await new Promise((r) => setTimeout(r, 25));
  }
  return reader;
}

const expect = (build, status, want) => {
  if (build.spec !== 'bare' && status !== want) throw new Error(`${build.spec}: HTTP ${status}, expected ${want}`);
};
const create = (b, i) => b.http('POST', '/api/v1/namespaces/bench/pods', podBody(`pod-${i}`)).then((r) => expect(b, r.status, 201));
const get = (b, i) => b.reader('GET', `/api/v1/namespaces/bench/pods/pod-${(i * 7919) % PODS}`).then((r) => expect(b, r.status, 200));

const all = [];
for (const spec of builds) all.push(await start(spec));
if (opts.mode === 'get') for (const b of all) await inParallel(PODS, CLIENTS, (i) => create(b, i));
for (const b of all) b.written = opts.mode === 'get' ? PODS : 0;
for (let round = 0; round < BURSTS; round++) {
  for (const b of round % 2 ? [...all].reverse() : all) {
    const cpu0 = cpuMs(b.server.child.pid);
    const from = b.written;
    const t = performance.now();
    await inParallel(BURST, CLIENTS, (i) => (opts.mode === 'get' ? get(b, i) : create(b, from + i)));
    b.ms += performance.now() - t;
    b.cpuMs += cpuMs(b.server.child.pid) - cpu0;
    b.n += BURST;
    if (opts.mode === 'create') b.written += BURST;
  }
}
const first = all[0].cpuMs / all[0].n;
console.log(`| build | server CPU per ${opts.mode} | × first | ${opts.mode}s/s |\n|---|---:|---:|---:|`);
for (const b of all) {
  console.log(`| ${b.spec} | ${((b.cpuMs * 1000) / b.n).toFixed(1)} µs | ${(b.cpuMs / b.n / first).toFixed(3)} | ${Math.round((b.n / b.ms) * 1000)} |`);
}
for (const b of all) {
  b.http.close();
  if (b.reader !== b.http) b.reader.close();
  b.server.child.kill('SIGTERM');
  await new Promise((r) => b.server.child.once('exit', r));
  rmSync(b.dir, { recursive: true, force: true });
}
