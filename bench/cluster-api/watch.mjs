// Watch fan-out: W concurrent watchers on one namespace of a real `cluster-api serve` process while
// writes go in at R/s (create, patch, delete of small Pods, open loop). Measures delivery latency
// (write acknowledged → event received, per watcher and event) and the server's memory, and checks
// every watcher's events against the write log: no gap, no duplicate, in order. Prints a markdown
// table and writes it with the raw numbers to bench/results/. Never asserts.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuMs, rssMiB } from '../lib/process.mjs';
import { percentile } from '../lib/stats.mjs';
import { defaultCli, root, startServer as startShared } from './server.mjs';

const { values: opts } = parseArgs({
  options: {
    // Another build of the server (e.g. an older commit's dist/cli.js) to compare in the same conditions.
    cli: { type: 'string', default: defaultCli },
    watchers: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '20' },
    storage: { type: 'string', default: 'memory:' },
    'max-seconds': { type: 'string', default: '300' },
    // Server alone on this core (taskset); this reader and the writer on the other one, so the two
    // saturated sides do not queue behind each other. 'none' → no pinning.
    'server-cpu': { type: 'string', default: '0' },
    // A V8 CPU profile of the server (node --cpu-prof) into this directory.
    'server-prof': { type: 'string' },
    // Internal: the writer runs in its own process so reading 1,000 streams never delays its pacing.
    role: { type: 'string', default: 'main' },
    url: { type: 'string' },
    token: { type: 'string' },
  },
});
const cli = opts.cli;
const W = Number(opts.watchers);
const RATE = Number(opts.rate);
const SECONDS = Number(opts.seconds);
const say = (msg) => process.stderr.write(`${msg}\n`);
const children = new Set();
const deadline = setTimeout(() => {
  say(`bench: exceeded --max-seconds ${opts['max-seconds']}; stopping`);
  for (const c of children) c.kill('SIGKILL');
  process.exit(124);
}, Number(opts['max-seconds']) * 1000);
deadline.unref();

/** taskset execs node in place, so the child's pid stays the server's (its /proc CPU is the server's). */
const pinnable = opts.role === 'main' && opts['server-cpu'] !== 'none' && cpus().length > 1 && spawnSync('taskset', ['-V']).status === 0;
const otherCpus = pinnable ? cpus().map((_, i) => i).filter((i) => String(i) !== opts['server-cpu']).join(',') : '';
if (pinnable) spawnSync('taskset', ['-p', '-c', otherCpus, String(process.pid)]);

const startServer = (dataDir) =>
  startShared({
    cli, storage: opts.storage, dataDir, children, cpu: pinnable ? opts['server-cpu'] : undefined,
    nodeFlags: opts['server-prof'] ? ['--cpu-prof', '--cpu-prof-dir', opts['server-prof']] : [],
  });


function client(server) {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  return (method, path, body, type = 'application/json') =>
    new Promise((resolve, reject) => {
      const headers = { authorization: `Bearer ${server.token}`, accept: 'application/json' };
      if (body) Object.assign(headers, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      const req = request({ host: server.url.hostname, port: server.url.port, method, path, headers, agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
      });
      req.once('error', reject);
      req.end(body);
    });
}

const rvOf = (text) => Number(/"resourceVersion":"(\d+)"/.exec(text)?.[1]);

const RV = Buffer.from('"resourceVersion":"');
const DELETED = Buffer.from('{"type":"DELETED"');
const NAME = Buffer.from('"name":"');

/** The number in quotes at `at` (digits only). */
const digitsAt = (buf, at) => {
  let n = 0;
  for (let i = at; i < buf.length && buf[i] >= 48 && buf[i] <= 57; i++) n = n * 10 + (buf[i] - 48);
  return n;
};

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * One watch connection on a raw socket, HTTP/1.1 chunked framing decoded here: Node's HTTP client
 * costs more per tiny chunk than the whole check, and the reader shares a core with the writer.
 * Hands each event line (a Buffer) to onEvent with the arrival time of the socket read that completed it.
 */
function openWatcher(server, path, onEvent) {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.url.hostname, port: Number(server.url.port), noDelay: true });
    let buf = null; // unparsed bytes
    let headersDone = false;
    let line = null; // the start of a line split across chunks
    const onData = (data) => {
      if (line) data = Buffer.concat([line, data]), (line = null);
      const now = performance.timeOrigin + performance.now();
      let start = 0;
      let nl;
      while ((nl = data.indexOf(10, start)) >= 0) {
        onEvent(data.subarray(start, nl), now);
        start = nl + 1;
      }
      if (start < data.length) line = Buffer.from(data.subarray(start));
    };
    socket.on('data', (chunk) => {
      buf = buf ? Buffer.concat([buf, chunk]) : chunk;
      if (!headersDone) {
        const end = buf.indexOf(CRLF2);
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        if (!/^HTTP\/1\.1 200 /.test(head) || !/\r\ntransfer-encoding: chunked/i.test(head)) {
          socket.destroy();
          return reject(new Error(`watch answered ${head.split('\r\n')[0]}`));
        }
        headersDone = true;
        buf = buf.subarray(end + 4);
        resolve(socket);
      }
      let at = 0;
      for (;;) {
        const eol = buf.indexOf(13, at);
        if (eol < 0 || eol + 1 >= buf.length) break;
        const size = Number.parseInt(buf.toString('latin1', at, eol), 16);
        if (size === 0) return void socket.end();
        if (buf.length < eol + 2 + size + 2) break;
        onData(buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      buf = at < buf.length ? buf.subarray(at) : null;
    });
    socket.once('error', (err) => (headersDone ? undefined : reject(err)));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${server.url.host}\r\nAuthorization: Bearer ${server.token}\r\nAccept: application/json\r\n\r\n`);
  });
}


/** The writer process; resolves with its acknowledgement log. */
function runWriter(server) {
  const argv = [fileURLToPath(import.meta.url), '--role', 'writer', '--url', server.url.href, '--token', server.token,
    '--rate', String(RATE), '--seconds', String(SECONDS)];
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.add(child);
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => code !== 0 && reject(new Error(`writer exited ${code}`)));
  });
}

/** Writes, open loop: create, patch, delete in turn, one every 1000/RATE ms; acknowledgement times as epoch ms. */
async function writer() {
  const server = { url: new URL(opts.url), token: opts.token };
  const call = client(server);
  const acked = [];
  const failures = [];
  const pending = [];
  const chain = new Map();
  const total = RATE * SECONDS;
  const began = performance.now();
  for (let k = 0; k < total; k++) {
    const due = began + (k * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const name = `p${Math.floor(k / 3)}`;
    const op = k % 3;
    // Each pod's create, patch and delete go in order (a patch before its create would be a 404).
    const send = () =>
      op === 0 ? call('POST', '/api/v1/namespaces/fan/pods', JSON.stringify({
        apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'fan' } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'nginx:1.25' }] },
      }))
      : op === 1 ? call('PATCH', `/api/v1/namespaces/fan/pods/${name}`, JSON.stringify({ metadata: { labels: { step: String(k) } } }), 'application/merge-patch+json')
      : call('DELETE', `/api/v1/namespaces/fan/pods/${name}?gracePeriodSeconds=0`);
    const write = (chain.get(name) ?? Promise.resolve()).then(send);
    chain.set(name, write.catch(() => undefined));
    if (op === 2) write.finally(() => chain.delete(name));
    pending.push(write.then((res) => {
      const now = performance.timeOrigin + performance.now();
      if (res.status >= 300) return void failures.push(`${res.status} ${res.body.slice(0, 120)}`);
      // A DELETE answers a Status without a revision: the DELETED event naming the pod has it.
      acked.push([op === 2 ? `del:${name}` : rvOf(res.body), now]);
    }, (err) => failures.push(String(err))));
  }
  await Promise.all(pending);
  process.send({ acked, failures, writeSeconds: (performance.now() - began) / 1000 }, () => process.exit(0));
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'watch-bench-'));
  const server = await startServer(dir);
  const call = client(server);
  try {
    await call('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fan' } }));
    const start = rvOf((await call('GET', '/api/v1/namespaces/fan/pods')).body);
    const rssIdle = rssMiB(server.child.pid);

    // Watchers: every received revision, in arrival order, and its arrival time.
    const received = Array.from({ length: W }, () => []);
    const arrival = new Map(); // revision → arrival times (one per watcher)
    const deletedName = new Map(); // revision of a DELETED event → pod name
    const sockets = [];
    const path = `/api/v1/namespaces/fan/pods?watch=true&resourceVersion=${start}`;
    const t0 = performance.now();
    for (let i = 0; i < W; i += 100) {
      const batch = [];
      for (let j = i; j < Math.min(W, i + 100); j++) {
        batch.push(openWatcher(server, path, (line, now) => {
          const rv = digitsAt(line, line.indexOf(RV) + RV.length);
          received[j].push(rv);
          if (line[9] === 68 && line.subarray(0, DELETED.length).equals(DELETED) && !deletedName.has(rv)) {
            const at = line.indexOf(NAME) + NAME.length;
            deletedName.set(rv, line.subarray(at, line.indexOf(34, at)).toString());
          }
          let times = arrival.get(rv);
          if (!times) arrival.set(rv, (times = []));
          times.push(now);
        }));
      }
      sockets.push(...(await Promise.all(batch)));
    }
    const connectMs = performance.now() - t0;
    const rssWatching = rssMiB(server.child.pid);
    say(`watch: ${W} watchers open in ${connectMs.toFixed(0)} ms; writing ${RATE}/s for ${SECONDS} s`);

    let rssPeak = rssWatching;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMiB(server.child.pid))), 250);
    const cpuBefore = cpuMs(server.child.pid);
    const clientBefore = cpuMs(process.pid);
    const wallBefore = performance.now();
    const { acked: ackList, failures, writeSeconds } = await runWriter(server);
    const acked = new Map(ackList);
    const total = RATE * SECONDS;
    // Let the last events arrive (bounded).
    const expected = total - failures.length;
    for (let i = 0; i < 200 && received.some((r) => r.length < expected); i++) await new Promise((r) => setTimeout(r, 50));
    clearInterval(sampler);
    const serverCpuMs = cpuMs(server.child.pid) - cpuBefore;
    const wallMs = performance.now() - wallBefore;
    const clientCpuMs = cpuMs(process.pid) - clientBefore;

    // The write log: creates and patches by their acknowledged revision; a delete answers a Status
    // without one, so its revision is the DELETED event naming that pod.
    const ackOf = new Map();
    for (const [key, t] of acked) if (typeof key === 'number') ackOf.set(key, t);
    for (const [rv, name] of deletedName) if (acked.has(`del:${name}`)) ackOf.set(rv, acked.get(`del:${name}`));
    const log = [...ackOf.keys()].sort((a, b) => a - b);
    let gaps = 0;
    let dups = 0;
    let outOfOrder = 0;
    const logSet = new Set(log);
    for (const r of received) {
      const seen = new Set();
      for (let k = 0; k < r.length; k++) {
        if (seen.has(r[k])) dups++;
        seen.add(r[k]);
        if (k > 0 && r[k] <= r[k - 1]) outOfOrder++;
      }
      for (const rv of logSet) if (!seen.has(rv)) gaps++;
    }
    const logComplete = log.length === expected;

    const latencies = [];
    for (const [rv, times] of arrival) {
      const ack = ackOf.get(rv);
      if (ack === undefined) continue;
      for (const t of times) latencies.push(Math.max(0, t - ack));
    }
    latencies.sort((a, b) => a - b);

    for (const s of sockets) s.destroy();
    await new Promise((r) => setTimeout(r, 2000));
    const rssAfter = rssMiB(server.child.pid);

    const rows = [
      ['watchers', W],
      ['writes (create / patch / delete)', `${expected} at ${(expected / writeSeconds).toFixed(0)}/s (target ${RATE}/s)`],
      ['events delivered', latencies.length.toLocaleString('en-US')],
      ['delivery latency p50', `${percentile(latencies, 50).toFixed(1)} ms`],
      ['delivery latency p99', `${percentile(latencies, 99).toFixed(1)} ms (target ≤ 100 ms)`],
      ['delivery latency max', `${percentile(latencies, 100).toFixed(1)} ms`],
      ['gaps / duplicates / out of order', `${gaps} / ${dups} / ${outOfOrder}`],
      ['write log complete (every acknowledged write seen)', logComplete ? 'yes' : 'NO'],
      ['failed writes', failures.length],
      ['server CPU per delivered event (writes included)', `${((serverCpuMs * 1000) / Math.max(1, latencies.length)).toFixed(1)} µs → one idle core ≈ ${Math.round(latencies.length / (serverCpuMs / 1000)).toLocaleString('en-US')} events/s`],
      ['CPU share during the run: server / this reader', `${((100 * serverCpuMs) / wallMs).toFixed(0)} % / ${((100 * clientCpuMs) / wallMs).toFixed(0)} % of one core`],
      ['open all watchers', `${connectMs.toFixed(0)} ms`],
      ['server RSS idle → watching → peak → after close', `${rssIdle.toFixed(0)} → ${rssWatching.toFixed(0)} → ${rssPeak.toFixed(0)} → ${rssAfter.toFixed(0)} MiB`],
    ];
    const when = new Date();
    const pinning = pinnable ? `server on cpu ${opts['server-cpu']}, reader + writer on ${otherCpus}` : 'not pinned';
    const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.versions.node}, load average ${loadavg()[0].toFixed(1)}, ${pinning}`;
    const md = [
      `${when.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${machine} · storage ${opts.storage}`,
      '',
      '| measure | value |',
      '|---|---:|',
      ...rows.map(([k, v]) => `| ${k} | ${v} |`),
    ].join('\n');
    process.stdout.write(`${md}\n`);
    if (failures.length) say(`first failures: ${failures.slice(0, 3).join(' | ')}`);
    const out = join(root, 'bench/results');
    mkdirSync(out, { recursive: true });
    const stamp = when.toISOString().replace(/[:.]/g, '-');
    writeFileSync(join(out, `cluster-api-watch-${stamp}.md`), `${md}\n`);
    writeFileSync(join(out, `cluster-api-watch-${stamp}.json`), JSON.stringify({ when, machine, opts, rows, gaps, dups, outOfOrder, failures: failures.length }, null, 2));
  } finally {
    server.child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

await (opts.role === 'writer' ? writer() : main());
