// `node bench/cluster-api/etcd.mjs` (after `npm run build`): the cluster API on etcd beside SQLite.
// Same load as run.mjs — real `cluster-api serve` processes, plain HTTP on loopback, 50 keep-alive
// clients, ~2 KiB pods — for sqlite, etcd with 1 member, etcd with 3 members, and two API servers on
// one etcd member (clients split between them). Beside each: the raw storage speed (the same writes
// straight into the storage interface), the CPU seconds each process spent per 1,000 creates, and
// etcd's own WAL fsync count and mean duration during the creates, so the table says what dominates.
// Prints a markdown table; writes it with the raw numbers to bench/results/. Never asserts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs } from '../lib/process.mjs';
import { medianTime } from '../lib/stats.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const dist = (p) => join(root, 'packages/cluster-api/dist', p);
const harness = (p) => join(root, 'packages/cluster-api/testing/dist', p);
const { startEtcd } = await import(harness('etcd-cluster.js'));
const { startApiServer } = await import(harness('etcd-api-servers.js'));
const { openStorage } = await import(dist('storage/factory.js'));
const { measureStorage } = await import(harness('storage-speed.js'));

const { values: opts } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    setups: { type: 'string', default: 'sqlite,etcd-1,etcd-3,etcd-1x2' },
    watchers: { type: 'string', default: '50' },
    'watch-events': { type: 'string', default: '500' },
    'max-seconds': { type: 'string', default: '900' },
  },
});
const N = Number(opts.n);
const CLIENTS = Number(opts.clients);
const ROUNDS = Number(opts.rounds);
const WATCHERS = Number(opts.watchers);
const WATCH_EVENTS = Number(opts['watch-events']);
const say = (msg) => process.stderr.write(`${msg}\n`);
const cleanups = [];
const deadline = setTimeout(async () => {
  say(`bench: exceeded --max-seconds ${opts['max-seconds']}; stopping`);
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  process.exit(124);
}, Number(opts['max-seconds']) * 1000);
deadline.unref();

function podBody(name) {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', shard: String(name.length % 7) }, annotations: { pad: '' } },
    spec: { containers: [{ name: 'app', image: 'registry.example/bench/app:1.0', ports: [{ containerPort: 8080 }] }] },
  };
  pod.metadata.annotations.pad = 'x'.repeat(Math.max(0, 2048 - JSON.stringify(pod).length));
  return JSON.stringify(pod);
}

function client(server) {
  const url = new URL(server.url);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const auth = `Bearer ${server.token}`;
  return (method, path, body) =>
    new Promise((resolve, reject) => {
      const headers = { authorization: auth, accept: 'application/json' };
      if (body) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      const req = request({ host: url.hostname, port: url.port, method, path, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks) }));
      });
      req.once('error', reject);
      req.end(body);
    });
}

async function inParallel(n, concurrency, op) {
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, async () => { while (next < n) await op(next++); }));
  return performance.now() - start;
}

/** etcd's WAL fsync histogram (count, sum seconds) summed over members. */
async function walFsync(etcd) {
  let count = 0;
  let sum = 0;
  for (const m of etcd?.members ?? []) {
    const text = await (await fetch(`http://127.0.0.1:${m.metricsPort}/metrics`)).text();
    count += Number(/^etcd_disk_wal_fsync_duration_seconds_count (\S+)/m.exec(text)?.[1] ?? 0);
    sum += Number(/^etcd_disk_wal_fsync_duration_seconds_sum (\S+)/m.exec(text)?.[1] ?? 0);
  }
  return { count, sum };
}

async function measureApi(calls, pids, etcd) {
  const names = Array.from({ length: N }, (_, i) => `pod-${String(i).padStart(6, '0')}`);
  const bodies = names.map(podBody);
  const pick = (i) => calls[i % calls.length];
  const expect = (want, r, what) => { if (r.status !== want) throw new Error(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`); };
  expect(201, await calls[0]('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } })), 'namespace');
  const cpu0 = pids.map(([, pid]) => (cpuMs(pid) / 1000));
  const fsync0 = await walFsync(etcd);
  const createMs = await inParallel(N, CLIENTS, async (i) => expect(201, await pick(i)('POST', '/api/v1/namespaces/bench/pods', bodies[i]), 'create'));
  const fsync1 = await walFsync(etcd);
  const cpuPer1k = Object.fromEntries(pids.map(([name, pid], j) => [name, (((cpuMs(pid) / 1000) - cpu0[j]) / N) * 1000]));
  const getMs = await inParallel(N, CLIENTS, async (i) => expect(200, await pick(i)('GET', `/api/v1/namespaces/bench/pods/${names[i]}`), 'get'));
  const listAllMs = await medianTime(ROUNDS, async () => {
    const r = await calls[0]('GET', '/api/v1/namespaces/bench/pods');
    expect(200, r, 'list');
    if (JSON.parse(r.body).items.length !== N) throw new Error('list is short');
  });
  const fsyncs = fsync1.count - fsync0.count;
  return {
    createsPerSec: (N / createMs) * 1000,
    getsPerSec: (N / getMs) * 1000,
    listAllMs,
    cpuPer1k,
    fsyncs,
    fsyncMeanMs: fsyncs > 0 ? ((fsync1.sum - fsync0.sum) / fsyncs) * 1000 : undefined,
  };
}

/** A watch stream that counts its event lines (one JSON object per line). */
function countingWatch(server, path) {
  const url = new URL(server.url);
  const w = { lines: 0, req: undefined };
  return new Promise((resolve, reject) => {
    w.req = request({ host: url.hostname, port: url.port, path, headers: { authorization: `Bearer ${server.token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch: HTTP ${res.statusCode}`));
      res.on('data', (chunk) => { for (const b of chunk) if (b === 10) w.lines++; });
      resolve(w);
    });
    w.req.once('error', (err) => (w.closed ? undefined : reject(err)));
    w.req.end();
  });
}

/**
 * Watch fan-out: WATCHERS watches (split over the API servers) from one resourceVersion, then
 * WATCH_EVENTS creates; the time until every watcher has every event gives events delivered/s.
 */
async function measureFanOut(servers, calls) {
  await calls[0]('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'fanout' } }));
  const list = JSON.parse((await calls[0]('GET', '/api/v1/namespaces/fanout/pods')).body);
  const path = `/api/v1/namespaces/fanout/pods?watch=1&resourceVersion=${list.metadata.resourceVersion}`;
  const watches = await Promise.all(Array.from({ length: WATCHERS }, (_, i) => countingWatch(servers[i % servers.length], path)));
  const start = performance.now();
  await inParallel(WATCH_EVENTS, CLIENTS, (i) => calls[i % calls.length]('POST', '/api/v1/namespaces/fanout/pods', podBody(`w-${i}`)));
  const until = Date.now() + 120_000;
  while (watches.some((w) => w.lines < WATCH_EVENTS) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  const ms = performance.now() - start;
  const delivered = watches.reduce((n, w) => n + Math.min(w.lines, WATCH_EVENTS), 0);
  for (const w of watches) { w.closed = true; w.req.destroy(); }
  return { eventsPerSec: (delivered / ms) * 1000, complete: delivered === WATCHERS * WATCH_EVENTS };
}

async function measureRaw(url) {
  const storage = await openStorage(url, { compaction: false });
  try {
    return await measureStorage(storage, { n: N, valueBytes: 2048, concurrency: CLIENTS, pageSize: 500, listRounds: ROUNDS });
  } finally {
    await storage.close();
  }
}

async function runSetup(setup) {
  const dir = mkdtempSync(join(tmpdir(), `bench-etcd-${setup}-`));
  const stops = [];
  const stop = async () => { for (const s of stops.reverse()) await s().catch(() => undefined); rmSync(dir, { recursive: true, force: true }); };
  cleanups.push(stop);
  try {
    let etcd;
    let url;
    let rawUrl;
    if (setup === 'sqlite') {
      url = `sqlite:${join(dir, 'api.db')}`;
      rawUrl = `sqlite:${join(dir, 'raw.db')}`;
    } else {
      // Member data on disk (the temp dir), never tmpfs: etcd fsyncs every commit, as in production.
      etcd = await startEtcd({ members: setup === 'etcd-3' ? 3 : 1 });
      stops.push(() => etcd.stop());
      url = rawUrl = etcd.url;
    }
    say(`${setup}: raw storage, ${N} objects`);
    const raw = await measureRaw(rawUrl);
    if (etcd) {
      // A fresh cluster for the API run, so both see the same empty store.
      await etcd.stop();
      etcd = await startEtcd({ members: setup === 'etcd-3' ? 3 : 1 });
      stops.push(() => etcd.stop());
      url = etcd.url;
    }
    const servers = [];
    for (let i = 0; i < (setup === 'etcd-1x2' ? 2 : 1); i++) {
      const s = await startApiServer(url);
      stops.push(() => s.stop());
      servers.push(s);
    }
    say(`${setup}: API over HTTP, ${N} pods, ${CLIENTS} clients over ${servers.length} server(s)`);
    const pids = [...servers.map((s, i) => [`api${i + 1}`, s.child.pid]), ...(etcd?.members ?? []).map((m) => [m.name, m.pid])];
    const calls = servers.map(client);
    const api = await measureApi(calls, pids, etcd);
    say(`${setup}: watch fan-out, ${WATCHERS} watchers × ${WATCH_EVENTS} events`);
    return { setup, members: etcd?.members.length ?? 0, api, fanOut: await measureFanOut(servers, calls), raw };
  } finally {
    await stop();
  }
}

const fmt = (v, unit) => (v === undefined || Number.isNaN(v) ? '—' : unit === 'ms' ? `${v.toFixed(0)} ms` : `${Math.round(v).toLocaleString('en-US')}/s`);

function render(results) {
  const head = `| measure | ${results.map((r) => r.setup).join(' | ')} |`;
  const lines = [head, `|---|${results.map(() => '---:').join('|')}|`];
  const row = (label, f) => lines.push(`| ${label} | ${results.map(f).join(' | ')} |`);
  row('API creates/s (50 clients)', (r) => fmt(r.api.createsPerSec, '/s'));
  row('API gets/s (50 clients)', (r) => fmt(r.api.getsPerSec, '/s'));
  row(`API list of ${N} pods, one call (median)`, (r) => fmt(r.api.listAllMs, 'ms'));
  row(`watch fan-out: events delivered/s (${WATCHERS} watchers × ${WATCH_EVENTS} creates)`, (r) => `${fmt(r.fanOut.eventsPerSec, '/s')}${r.fanOut.complete ? '' : ' (incomplete after 120 s)'}`);
  row('raw storage creates/s', (r) => fmt(r.raw.createsPerSec, '/s'));
  row('raw storage gets/s', (r) => fmt(r.raw.getsPerSec, '/s'));
  row(`raw storage list of ${N} (median)`, (r) => fmt(r.raw.listAllMs, 'ms'));
  row('creates/s vs sqlite API', (r) => `${((r.api.createsPerSec / results.find((x) => x.setup === 'sqlite')?.api.createsPerSec) * 100 || 0).toFixed(0)} %`);
  row('CPU s per 1,000 creates (per process)', (r) => Object.entries(r.api.cpuPer1k).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', '));
  row('etcd WAL fsyncs per member during creates', (r) => (r.api.fsyncs ? `${Math.round(r.api.fsyncs / r.members)} (${(N / (r.api.fsyncs / r.members)).toFixed(1)} creates per fsync)` : '—'));
  row('etcd mean WAL fsync', (r) => (r.api.fsyncMeanMs === undefined ? '—' : `${r.api.fsyncMeanMs.toFixed(2)} ms`));
  return lines.join('\n');
}

const results = [];
try {
  for (const setup of opts.setups.split(',')) results.push(await runSetup(setup));
} finally {
  clearTimeout(deadline);
}
const table = render(results);
const env = `node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, N = ${N}, ${CLIENTS} clients`;
process.stdout.write(`${table}\n\n${env}\n`);
const out = join(root, 'bench/results');
mkdirSync(out, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(join(out, `cluster-api-etcd-${stamp}.md`), `${table}\n\n${env}\n\n\`\`\`json\n${JSON.stringify(results, null, 2)}\n\`\`\`\n`);
