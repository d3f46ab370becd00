// `npm run bench:broker`: the event broker (packages/cluster-api/src/broker) in a process of its own,
// on SQLite and on NATS JetStream (one local nats-server), measured three ways per round:
//
// - ingress: events/s answered 202 (durably stored) by a Broker with no Trigger, 64 connections;
// - end to end: events/s delivered through one Trigger to a local HTTP subscriber (202), from the
//   first send to the last delivery, and the same to a real function (func-runtime, replying with an
//   event the broker stores and evaluates too);
// - latency: ingress→subscriber p50/p99 with events sent at a steady 1,000/s;
// - a Sequence of 3 steps (flows.knative.dev/v1, wired as its controller wires it: a channel and a
//   Subscription per step, each step's reply to the next channel, the last to the subscriber):
//   events/s end to end, and p50/p99 at a steady 1,000 events/s.
// - async invocations: requests/s answered 202 (durably stored) by POST /invocations/{ns}/{fn}, the
//   broker's side of `Prefer: respond-async`, while the invoker runs them against a local subscriber.
//
// Rounds interleave the engines; the table shows medians. Prints markdown; never asserts.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { httpClient } from '../cluster-api/http-client.mjs';
import { median } from '../lib/stats.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const standaloneBroker = join(root, 'packages/cluster-api/testing/dist/standalone-broker.js');
const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
    engines: { type: 'string', default: 'sqlite,nats' },
    connections: { type: 'string', default: '64' },
    /** Comma-separated: broker (ingress, end to end, function, latency), sequence, async. */
    measure: { type: 'string', default: 'broker,sequence,async' },
    // --journal false: the broker without the debugger's journal (debug/journal.ts), to see its cost.
    journal: { type: 'string', default: 'true' },
    // --profile <dir>: each broker process writes a V8 CPU profile there (node --cpu-prof), stopped by SIGTERM.
    profile: { type: 'string' },
  },
});
const ROUNDS = Number(opts.rounds);
const SECONDS = Number(opts.seconds);
const CONNS = Number(opts.connections);
const say = (m) => process.stderr.write(`${m}\n`);
const children = new Set();
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(130));
const dir = mkdtempSync(join(tmpdir(), 'bench-broker-'));

function child(args, ready, nodeArgs = []) {
  const c = spawn(process.execPath, [...nodeArgs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(c);
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d.toString();
      const v = ready(out);
      if (v) resolve({ proc: c, value: v, stop: () => stopChild(c, nodeArgs.length > 0) });
    };
    c.stdout.on('data', onData);
    c.stderr.on('data', onData);
    c.once('exit', (code) => reject(new Error(`exited ${code}: ${out.slice(-2000)}`)));
  });
}

/** SIGKILL, or for a profiled process SIGTERM and its exit (the profile is written then). */
async function stopChild(c, graceful) {
  children.delete(c);
  if (!graceful) return void c.kill('SIGKILL');
  const exited = new Promise((resolve) => c.once('exit', resolve));
  c.kill('SIGTERM');
  await exited;
}
const brokerNodeArgs = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${opts.profile}`] : [];

/** A broker process: standalone-broker.js (packages/cluster-api/testing) with one Broker and, given a subscriber, one Trigger to it. */
async function startBroker(store, subscriberUrl, invocationsGateway) {
  const ns = 'bench';
  const config = join(dir, `config-${performance.now()}.json`);
  const meta = (kind, name) => ({ apiVersion: 'eventing.knative.dev/v1', kind, metadata: { namespace: ns, name } });
  const triggers = subscriberUrl ? [{ ...meta('Trigger', 'sink'), spec: { broker: 'default', filter: { attributes: { type: 'bench' } }, subscriber: { uri: subscriberUrl } } }] : [];
  writeFileSync(config, JSON.stringify({ brokers: [{ ...meta('Broker', 'default'), spec: {} }], triggers, options: { maxInFlightPerTrigger: 128, journal: opts.journal !== 'false' }, ...(invocationsGateway ? { invocationsGateway } : {}) }));
  const b = await child([standaloneBroker, store, config], (out) => /^\{"url".*\}$/m.exec(out)?.[0], brokerNodeArgs);
  const { url, fronts } = JSON.parse(b.value);
  return { ...b, ingress: `/${ns}/default`, url, fronts };
}

/** A broker process serving a Sequence of `steps` steps at `stepUrl` whose reply goes to `replyUrl`: the children its controller makes. */
async function startSequence(store, stepUrl, replyUrl, steps = 3) {
  const { sequenceChildren } = await import(join(root, 'packages/cluster-api/dist/broker/flows/children.js'));
  const seq = { apiVersion: 'flows.knative.dev/v1', kind: 'Sequence', metadata: { namespace: 'bench', name: 'seq', uid: 'bench-seq' },
    spec: { steps: Array.from({ length: steps }, (_, i) => ({ uri: `${stepUrl}step-${i}` })), reply: { uri: replyUrl } } };
  const { channels, subscriptions } = sequenceChildren(seq);
  const config = join(dir, `config-${performance.now()}.json`);
  writeFileSync(config, JSON.stringify({ brokers: [], triggers: [], channels, subscriptions: subscriptions.map((x, i) => ({ ...x, metadata: { ...x.metadata, uid: `s${i}` } })), options: { maxInFlightPerTrigger: 128, journal: opts.journal !== 'false' } }));
  const b = await child([standaloneBroker, store, config], (out) => /"url":"([^"]+)"/.exec(out)?.[1], brokerNodeArgs);
  return { ...b, ingress: `/inmemorychannels/bench/${channels[0].metadata.name}`, url: b.value };
}

/** The subscriber process (subscriber.mjs). */
async function subscriber() {
  const c = await child([fileURLToPath(new URL('./subscriber.mjs', import.meta.url))], (out) => /"url":"([^"]+)"/.exec(out)?.[1]);
  const url = c.value;
  return { url, pid: c.proc.pid, stats: async () => (await fetch(`${url}stats`)).json(), reset: () => fetch(`${url}reset`, { method: 'POST' }), close: c.stop };
}

const epochNow = () => performance.timeOrigin + performance.now();
/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); undefined elsewhere. */
const cpuMs = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return undefined;
  }
};

let seq = 0;
const event = (extra = {}) => ({ 'ce-specversion': '1.0', 'ce-id': `b${seq++}`, 'ce-source': '/bench', 'ce-type': 'bench', ...extra });
/** The raw-socket keep-alive client of bench/cluster-api: cheaper per request than Node's http client. */
function rawClient(url, connections) {
  const call = httpClient(url, { connections });
  return { post: async (path, headers, body) => (await call('POST', path, body, 'application/json', headers)).status, close: () => call.close() };
}
const BODY = JSON.stringify({ customerId: '42', name: 'Ada' });

/** Closed loop: every connection posts back to back for `seconds` (`headers()` per request, default an event's). Returns 202s per second. */
async function flood(url, path, seconds, headers = () => event()) {
  const client = rawClient(url, CONNS);
  let ok = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNS }, async () => {
    while (performance.now() < end) if ((await client.post(path, headers(), BODY)) === 202) ok++;
  }));
  const rate = ok / ((performance.now() - t0) / 1000);
  client.close();
  return { ok, rate };
}

const until = async (check, ms) => {
  const deadline = performance.now() + ms;
  while (!check() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
};

async function metric(url, name) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(new RegExp(`^${name}\\{[^}]*trigger[^}]*\\} (\\d+)`, 'gm'))].reduce((a, m) => a + Number(m[1]), 0);
}

/** Open loop at `perSecond` for `seconds`: p50 and p99 of ingress→subscriber, ms. */
async function latency(url, path, sub, perSecond, seconds) {
  const client = rawClient(url, 32);
  await sub.reset();
  const total = perSecond * seconds;
  const t0 = performance.now();
  const sends = [];
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / perSecond;
    const wait = at - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    sends.push(client.post(path, event({ 'ce-sentat': String(epochNow()) }), BODY));
  }
  await Promise.all(sends);
  let stats = await sub.stats();
  const deadline = performance.now() + 30_000;
  while (stats.latencies < total && performance.now() < deadline) stats = await sub.stats();
  client.close();
  return { p50: stats.p50, p99: stats.p99 };
}

/** Events/s through the Sequence (first send to last arrival), then p50/p99 at 1,000/s. */
async function sequenceRound(store) {
  const out = {};
  const sub = await subscriber();
  const step = await child([fileURLToPath(new URL('./step.mjs', import.meta.url))], (o) => /"url":"([^"]+)"/.exec(o)?.[1]);
  const b = await startSequence(store(), step.value, sub.url);
  const t0 = epochNow();
  const [c0, s0, u0] = [cpuMs(b.proc.pid), cpuMs(step.proc.pid), cpuMs(sub.pid)];
  const sent = await flood(b.url, b.ingress, SECONDS);
  let st = await sub.stats();
  while (st.count < sent.ok && epochNow() - t0 < 120_000) st = await (await new Promise((r) => setTimeout(r, 50)), sub.stats());
  out.seq = st.count / ((st.last - t0) / 1000);
  out.seqCpu = (cpuMs(b.proc.pid) - c0) / st.count;
  // The bench's own processes, apart: the 3 steps (one process) and the subscriber.
  out.seqStepCpu = (cpuMs(step.proc.pid) - s0) / st.count;
  out.seqSubCpu = (cpuMs(sub.pid) - u0) / st.count;
  out.seqLost = sent.ok - st.count;
  const c1 = cpuMs(b.proc.pid);
  const l = await latency(b.url, b.ingress, sub, 1000, SECONDS);
  out.seqP50 = l.p50;
  out.seqP99 = l.p99;
  // At the target's rate rather than a flood (less batching per write and per socket read).
  out.seqCpu1000 = (cpuMs(b.proc.pid) - c1) / (1000 * SECONDS);
  await b.stop();
  step.stop();
  sub.close();
  return out;
}

/**
 * Asynchronous invocations, as the gateway hands them to the broker (the subscriber stands for the
 * gateway the invoker runs them through): 202s per second, and the broker's CPU per accepted one.
 */
async function asyncRound(engine, s, r) {
  // The accept path alone on SQLite only: a fresh file per broker, whereas on NATS what one broker
  // leaves unrun stays in the shared server's stream for the next.
  return { ...(await asyncWays(s, r, true)), ...(engine === 'sqlite' ? await asyncWays(s, r, false) : {}) };
}

/**
 * The three ways in, in an order that turns with the round: the broker's endpoint, and the
 * gateway's async path (async.ts) over HTTP to it or calling its queue in-process. `run`: the
 * invoker runs what is accepted (against the subscriber); else the accept path alone (SQLite): the invoker's
 * gateway never answers, so it stops at its first 128 in flight and runs nothing more.
 */
async function asyncWays(s, r, run) {
  const sub = await subscriber();
  const held = run ? undefined : createServer(() => undefined);
  if (held) await new Promise((resolve) => held.listen(0, '127.0.0.1', resolve));
  const b = await startBroker(s(), undefined, held ? `http://127.0.0.1:${held.address().port}/` : sub.url);
  const invocation = () => ({ 'x-func-method': 'POST', 'x-func-path': '/', 'x-func-host': 'fn.bench.localhost' });
  // The invocations stream and its consumer are made just after start: 503 until then.
  while ((await fetch(`${b.url}/invocations/bench/fn`, { method: 'POST', headers: invocation(), body: BODY })).status === 503) await new Promise((r) => setTimeout(r, 20));
  const ways = [
    ['async', b.url, '/invocations/bench/fn', invocation],
    ['asyncHttp', b.fronts.overHttp, '/', () => ({})],
    ['asyncInProcess', b.fronts.inProcess, '/', () => ({})],
  ];
  // Unmeasured: a second on each way first (the first seconds of a process run slower, JIT and caches).
  for (const [, url, path, headers] of ways) await flood(url, path, 1, headers);
  const out = {};
  for (let i = 0; i < ways.length; i++) {
    const [way, url, path, headers] = ways[(i + r) % ways.length];
    const key = run ? way : `${way}Accept`;
    // Each way starts with nothing left to run, and its CPU is counted until all it queued has run.
    await sub.reset();
    const c0 = cpuMs(b.proc.pid);
    const { ok, rate } = await flood(url, path, SECONDS, headers);
    out[key] = rate;
    const t0 = performance.now();
    while (run && (await sub.stats()).count < ok && performance.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 50));
    out[`${key}Cpu`] = (cpuMs(b.proc.pid) - c0) / ok;
  }
  b.stop();
  sub.close();
  held?.close();
  say(`  async: ${JSON.stringify(out)}`);
  return out;
}

async function round(engine, store, natsUrl, r = 0) {
  const s = () => (engine === 'sqlite' ? `sqlite:${join(dir, `r${performance.now()}.db`)}` : natsUrl);
  const measures = opts.measure.split(',');
  const out = measures.includes('sequence') ? await sequenceRound(s) : {};
  if (measures.includes('async')) Object.assign(out, await asyncRound(engine, s, r));
  if (!measures.includes('broker')) return out;
  let b = await startBroker(s());
  out.ingress = (await flood(b.url, b.ingress, SECONDS)).rate;
  await b.stop();
  const sub = await subscriber();
  b = await startBroker(s(), sub.url);
  const t0 = epochNow();
  const c0 = cpuMs(b.proc.pid);
  const sent = await flood(b.url, b.ingress, SECONDS);
  let st = await sub.stats();
  while (st.count < sent.ok && epochNow() - t0 < 120_000) st = await (await new Promise((r) => setTimeout(r, 50)), sub.stats());
  out.e2e = st.count / ((st.last - t0) / 1000);
  out.e2eCpu = (cpuMs(b.proc.pid) - c0) / st.count;
  Object.assign(out, await latency(b.url, b.ingress, sub, 1000, SECONDS));
  await b.stop();
  sub.close();
  const runtime = join(root, 'packages/runtime/dist/cli.js');
  if (existsSync(runtime)) {
    const fnPort = 20_000 + Math.floor(Math.random() * 20_000);
    const fnProc = spawn(process.execPath, [runtime, join(root, 'bench/runtime/functions/func-runtime/cloudevent.mjs'), '--port', String(fnPort)], { stdio: 'ignore' });
    children.add(fnProc);
    let up = false;
    while (!up) up = await fetch(`http://127.0.0.1:${fnPort}/health/readiness`).then((r) => r.ok, () => false);
    const fn = { stop: () => fnProc.kill('SIGKILL') };
    b = await startBroker(s(), `http://127.0.0.1:${fnPort}/`);
    const f0 = performance.now();
    const fsent = await flood(b.url, b.ingress, SECONDS);
    let delivered = 0;
    while (delivered < fsent.ok && performance.now() - f0 < 120_000) {
      delivered = await metric(b.url, 'broker_events_delivered_total');
      await new Promise((r) => setTimeout(r, 50));
    }
    out.fn = delivered / ((performance.now() - f0) / 1000);
    await b.stop();
    fn.stop();
  }
  return out;
}

const engines = opts.engines.split(',');
/** One nats-server with JetStream on a free port, its store in the bench's temp dir. */
async function startNats() {
  const port = await new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
  });
  const child = spawn(process.env.NATS_SERVER ?? 'nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', join(dir, 'nats')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => (log += d) && /Server is ready/.test(log) && resolve());
    child.once('exit', (code) => reject(new Error(`nats-server exited ${code}: ${log}`)));
  });
  return { url: `nats://127.0.0.1:${port}`, stop: () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM'))) };
}

let nats;
if (engines.includes('nats')) nats = await startNats();
const load0 = loadavg().map((x) => x.toFixed(2)).join(' ');
const results = Object.fromEntries(engines.map((e) => [e, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const e of engines) {
    say(`round ${r + 1}/${ROUNDS}: ${e}`);
    results[e].push(await round(e, undefined, nats?.url, r));
  }
}
await nats?.stop();
rmSync(dir, { recursive: true, force: true });

const fmt = (v, d = 0) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d }));
const row = (label, key, d, target) => `| ${label} | ${engines.map((e) => fmt(median(results[e].map((x) => x[key])), d)).join(' | ')} | ${target} |`;
console.log(`Run of ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${cpus()[0]?.model}, ${cpus().length} cores, Node ${process.version}; load average ${load0} before, ${loadavg().map((x) => x.toFixed(2)).join(' ')} after.`);
console.log(`${ROUNDS} interleaved rounds of ${SECONDS} s per measurement, ${CONNS} keep-alive connections, medians. Broker, subscriber and load generator share the machine (not pinned).\n`);
console.log(`| | ${engines.join(' | ')} | target |`);
console.log(`|---|${engines.map(() => '--:').join('|')}|---|`);
console.log(row('ingress, events/s answered 202 (stored)', 'ingress', 0, '≥ 5,000 (SQLite)'));
console.log(row('end to end, events/s through one Trigger to a local subscriber', 'e2e', 0, '≥ 2,000 (SQLite)'));
console.log(row('end to end, events/s to a func-runtime function (its replies stored too)', 'fn', 0, ''));
console.log(row('broker CPU per event through one Trigger, ms (flood and drain)', 'e2eCpu', 3, ''));
console.log(row('ingress→subscriber p50 at 1,000 events/s, ms', 'p50', 1, ''));
console.log(row('ingress→subscriber p99 at 1,000 events/s, ms', 'p99', 1, '≤ 50 (SQLite)'));
console.log(row('Sequence of 3 steps, events/s end to end (ingress → 3 steps → subscriber)', 'seq', 0, '≥ 1,000'));
console.log(row('Sequence of 3 steps, broker CPU per event, ms (flood and drain)', 'seqCpu', 3, ''));
console.log(row('Sequence of 3 steps, broker CPU per event at 1,000 events/s, ms', 'seqCpu1000', 3, ''));
console.log(row('Sequence of 3 steps, CPU per event of the step process (its 3 requests), ms', 'seqStepCpu', 3, ''));
console.log(row('Sequence of 3 steps, CPU per event of the subscriber, ms', 'seqSubCpu', 3, ''));
console.log(row('Sequence of 3 steps, p50 at 1,000 events/s, ms', 'seqP50', 1, ''));
console.log(row('Sequence of 3 steps, p99 at 1,000 events/s, ms', 'seqP99', 1, '≤ 50'));
console.log(row('async invocations/s accepted (202, stored) at POST /invocations', 'async', 0, '≥ 2,000'));
console.log(row('async invocations, broker CPU per invocation accepted and run, ms', 'asyncCpu', 3, ''));
console.log(row('async through the gateway path, HTTP hop to the broker: accepted/s', 'asyncHttp', 0, '≥ 2,000'));
console.log(row('async through the gateway path, HTTP hop: CPU per invocation accepted and run, ms (gateway and broker)', 'asyncHttpCpu', 3, ''));
console.log(row('async through the gateway path, queue in-process (serve): accepted/s', 'asyncInProcess', 0, '≥ 2,000'));
console.log(row('async through the gateway path, in-process: CPU per invocation accepted and run, ms', 'asyncInProcessCpu', 3, ''));
console.log(row('async accept path alone (nothing run): POST /invocations, accepted/s', 'asyncAccept', 0, ''));
console.log(row('async accept path alone: POST /invocations, CPU per accepted, ms', 'asyncAcceptCpu', 3, ''));
console.log(row('async accept path alone: gateway path, HTTP hop, accepted/s', 'asyncHttpAccept', 0, ''));
console.log(row('async accept path alone: gateway path, HTTP hop, CPU per accepted, ms', 'asyncHttpAcceptCpu', 3, ''));
console.log(row('async accept path alone: gateway path, in-process, accepted/s', 'asyncInProcessAccept', 0, '≥ 2,000'));
console.log(row('async accept path alone: gateway path, in-process, CPU per accepted, ms', 'asyncInProcessAcceptCpu', 3, ''));
process.exit(0);
