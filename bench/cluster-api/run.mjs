// `npm run bench:cluster-api`: the cluster API over HTTP (a real `cluster-api serve` process with its
// node agent, scheduler and broker off, plain HTTP on loopback, 50 keep-alive clients) beside the raw
// storage speed of the same backend, so the API's own overhead shows as a ratio; then `serve` with
// every part on and thousands of mostly unschedulable pods (scale.mjs). Prints markdown tables; writes
// them with the raw numbers to bench/results/. Never asserts: targets are printed next to the numbers.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { httpClient } from './http-client.mjs';
import { cpuMs } from '../lib/process.mjs';
import { medianTime } from '../lib/stats.mjs';
import { measureScale, renderScale } from './scale.mjs';
import { apiOnly, canPin, defaultCli, inParallel, podBody, root, startServer as startShared } from './server.mjs';

const { values: opts } = parseArgs({
  options: {
    n: { type: 'string', default: '10000' },
    clients: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
    backends: { type: 'string', default: 'memory,sqlite' },
    'max-seconds': { type: 'string', default: '1500' },
    // The "parts on" rows: pods created on serve's one 110-pod node ("" for none), then this long measured.
    scale: { type: 'string', default: '2000,10000' },
    'scale-clients': { type: 'string', default: '20' },
    'scale-seconds': { type: 'string', default: '60' },
    // Server on core 0 (taskset): run the bench itself as `taskset -c 1 node …` so load and server
    // never share a core; "none" turns pinning off.
    'server-cpu': { type: 'string', default: '0' },
    // Another build of the server (e.g. an older commit's dist/cli.js) to compare in the same conditions.
    cli: { type: 'string', default: defaultCli },
  },
});
const cli = opts.cli;
const N = Number(opts.n);
const CLIENTS = Number(opts.clients);
const ROUNDS = Number(opts.rounds);
const say = (msg) => process.stderr.write(`${msg}\n`);

const deadline = setTimeout(() => {
  say(`bench: exceeded --max-seconds ${opts['max-seconds']}; stopping`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(124);
}, Number(opts['max-seconds']) * 1000);
deadline.unref();
const children = new Set();
const pinnable = canPin(opts['server-cpu']);

const startServer = (storage, dataDir) =>
  startShared({ cli, storage, dataDir, cpu: pinnable ? opts['server-cpu'] : undefined, children });

const client = (server) => httpClient(server.url, { token: server.token, connections: CLIENTS });

async function timedWithCpu(pid, n, op) {
  const cpu0 = cpuMs(pid);
  const ms = await inParallel(n, CLIENTS, op);
  return { perSec: (n / ms) * 1000, cpuUs: ((cpuMs(pid) - cpu0) * 1000) / n };
}

async function measureApi(call, pid) {
  const names = Array.from({ length: N }, (_, i) => `pod-${String(i).padStart(6, '0')}`);
  const bodies = names.map((name) => podBody(name));
  const expect = (want, r, what) => { if (r.status !== want) throw new Error(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`); };
  expect(201, await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'bench' } })), 'namespace');
  const creates = await timedWithCpu(pid, N, async (i) => expect(201, await call('POST', '/api/v1/namespaces/bench/pods', bodies[i]), 'create'));
  const gets = await timedWithCpu(pid, N, async (i) => expect(200, await call('GET', `/api/v1/namespaces/bench/pods/${names[i]}`), 'get'));
  const listCpu0 = cpuMs(pid);
  const listAllMs = await medianTime(ROUNDS, () => call('GET', '/api/v1/namespaces/bench/pods'), (r) => {
    expect(200, r, 'list');
    const items = JSON.parse(r.body).items.length;
    if (items !== N) throw new Error(`list returned ${items} of ${N}`);
  });
  const listCpuMs = (cpuMs(pid) - listCpu0) / ROUNDS;
  // Each page is parsed on the clock: the next request needs its continue token.
  const listPagedMs = await medianTime(ROUNDS, async () => {
    let cont = '';
    let count = 0;
    do {
      const r = await call('GET', `/api/v1/namespaces/bench/pods?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      expect(200, r, 'paged list');
      const page = JSON.parse(r.body);
      count += page.items.length;
      cont = page.metadata.continue ?? '';
    } while (cont);
    return count;
  }, (count) => {
    if (count !== N) throw new Error(`paged list returned ${count} of ${N}`);
  });
  return { createsPerSec: creates.perSec, getsPerSec: gets.perSec, listAllMs, listPagedMs, createCpuUs: creates.cpuUs, getCpuUs: gets.cpuUs, listCpuMs };
}

async function measureRaw(storageUrl) {
  const { openStorage } = await import(join(root, 'packages/cluster-api/dist/storage/factory.js'));
  const { measureStorage } = await import(join(root, 'packages/cluster-api/testing/dist/storage-speed.js'));
  const storage = await openStorage(storageUrl, { compaction: false });
  try {
    return await measureStorage(storage, { n: N, valueBytes: 2048, concurrency: CLIENTS, pageSize: 500, listRounds: ROUNDS });
  } finally {
    await storage.close();
  }
}

const targets = { sqlite: { createsPerSec: 3000, getsPerSec: 10000, listAllMs: 500 } };
const fmt = (v, unit) => (unit === 'ms' ? `${v.toFixed(0)} ms` : `${Math.round(v).toLocaleString('en-US')}/s`);

async function runBackend(backend) {
  const dir = mkdtempSync(join(tmpdir(), `bench-cluster-api-${backend}-`));
  const url = backend === 'memory' ? 'memory:' : `sqlite:${join(dir, 'api.db')}`;
  try {
    say(`${backend}: raw storage, ${N} objects`);
    const raw = await measureRaw(backend === 'memory' ? 'memory:' : `sqlite:${join(dir, 'raw.db')}`);
    say(`${backend}: API over HTTP, ${N} pods, ${CLIENTS} clients`);
    const server = await startServer(url, join(dir, 'data'));
    const call = client(server);
    try {
      return { backend, api: await measureApi(call, server.child.pid), raw };
    } finally {
      call.close();
      server.child.kill('SIGTERM');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function render(results) {
  const rows = [
    ['creates/s (50 clients)', 'createsPerSec', '/s'],
    ['gets/s (50 clients)', 'getsPerSec', '/s'],
    [`list ${N} pods, one call (median)`, 'listAllMs', 'ms'],
    [`list ${N} pods, pages of 500 (median)`, 'listPagedMs', 'ms'],
  ];
  const lines = [
    `| measure | ${results.map((r) => `${r.backend} API | ${r.backend} raw storage | API / raw`).join(' | ')} | target (sqlite API) |`,
    `|---|${results.map(() => '---:|---:|---:').join('|')}|---:|`,
  ];
  for (const [label, key, unit] of rows) {
    const cells = results.map((r) => {
      const ratio = unit === 'ms' ? r.raw[key] / r.api[key] : r.api[key] / r.raw[key];
      return `${fmt(r.api[key], unit)} | ${fmt(r.raw[key], unit)} | ${(ratio * 100).toFixed(0)} %`;
    });
    const t = targets.sqlite[key];
    lines.push(`| ${label} | ${cells.join(' | ')} | ${t ? (unit === 'ms' ? `≤ ${t} ms` : `≥ ${t.toLocaleString('en-US')}/s`) : '—'} |`);
  }
  const cpuRow = (label, key) =>
    `| ${label} | ${results.map((r) => `${r.api[key].toFixed(0)} µs → ${Math.round(1e6 / r.api[key]).toLocaleString('en-US')}/s per core | — | —`).join(' | ')} | — |`;
  lines.push(cpuRow('server CPU per create → one idle core', 'createCpuUs'), cpuRow('server CPU per get → one idle core', 'getCpuUs'));
  lines.push(`| server CPU per full list of ${N} | ${results.map((r) => `${r.api.listCpuMs.toFixed(0)} ms | — | —`).join(' | ')} | — |`);
  return lines.join('\n');
}

/** Creates and gets against bare node:http on this machine, now: the ceiling any HTTP API here can reach. */
async function measureCeiling() {
  say('bare node:http ceiling');
  const server = await startServer('bare', '');
  const call = client(server);
  const body = podBody('bare');
  try {
    const posts = await timedWithCpu(server.child.pid, N, () => call('POST', '/x', body));
    const gets = await timedWithCpu(server.child.pid, N, () => call('GET', '/x'));
    return { createsPerSec: posts.perSec, getsPerSec: gets.perSec, createCpuUs: posts.cpuUs, getCpuUs: gets.cpuUs };
  } finally {
    call.close();
    server.child.kill('SIGTERM');
  }
}

const loadAtStart = loadavg();
const ceiling = await measureCeiling();
const results = [];
for (const backend of opts.backends.split(',')) results.push(await runBackend(backend));
const pinning = pinnable ? `server pinned to cpu ${opts['server-cpu']}` : 'server not pinned';
const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load average ${loadAtStart.map((l) => l.toFixed(2)).join(' ')} at the start, ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end, ${pinning}`;
const table = render(results);
const scaleRuns = [];
for (const pods of opts.scale.split(',').filter(Boolean).map(Number)) {
  scaleRuns.push(await measureScale({
    cli, pods, clients: Number(opts['scale-clients']), seconds: Number(opts['scale-seconds']),
    cpu: pinnable ? opts['server-cpu'] : undefined, children, say,
  }));
}
const scaleSection = scaleRuns.length === 0 ? '' : `\n## serve with every part on: pods on one 110-pod node, most unschedulable\n\n\`serve\` with its defaults (node agent, scheduler, controllers, broker; SQLite), the pods created by ${opts['scale-clients']} parallel clients, then the server's CPU over the next ${opts['scale-seconds']} s once it has settled (target: < 5 % of a core for 2,000 pods) and the latency of a GET and a LIST of 500 on a new connection twice a second meanwhile (scale.mjs).\n\n${renderScale(scaleRuns)}\n`;
const ceilingLine = `Ceiling on this machine now (bare node:http, ~2 KiB JSON answer, same clients): ${fmt(ceiling.createsPerSec, '/s')} POSTs, ${fmt(ceiling.getsPerSec, '/s')} GETs; its CPU: ${ceiling.createCpuUs.toFixed(0)} µs per POST, ${ceiling.getCpuUs.toFixed(0)} µs per GET.`;
const report = `# cluster-api benchmark\n\n${new Date().toISOString()} · ${machine}\n\nPlain HTTP/1.1 keep-alive on 127.0.0.1 (\`--insecure-http ${apiOnly.join(' ')}\`), ${N} Pods of ~2 KiB, ${CLIENTS} concurrent clients. "API / raw": the share of the raw storage speed the API keeps.\n\n${ceilingLine}\n\n${table}\n${scaleSection}`;
process.stdout.write(report);
mkdirSync(join(root, 'bench/results'), { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(join(root, `bench/results/cluster-api-${stamp}.md`), report);
writeFileSync(join(root, `bench/results/cluster-api-${stamp}.json`), JSON.stringify({ machine, n: N, clients: CLIENTS, ceiling, results, scale: scaleRuns }, null, 2));
