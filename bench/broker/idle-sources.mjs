// `node bench/broker/idle-sources.mjs`: what idle PingSources cost `cluster-api serve` (its broker,
// controller manager and the in-process ping adapter; no node, no gateway). One serve process; its
// CPU (utime + stime from /proc/<pid>/stat) is read over quiet windows: with no PingSource, with 100
// PingSources scheduled hourly (`0 * * * *`, all Ready, none due in the window), and with none
// again after they are deleted. Windows alternate for the given rounds; medians are printed as
// one markdown row. Never asserts.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from '../lib/stats.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const { KubeClient, resourceType } = await import(join(root, 'packages/kube-client/dist/index.js'));
const { values: opts } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '20' }, sources: { type: 'string', default: '100' } } });
const ROUNDS = Number(opts.rounds);
const SECONDS = Number(opts.seconds);
const COUNT = Number(opts.sources);
const say = (m) => process.stderr.write(`${m}\n`);
const pingSources = resourceType('sources.knative.dev/v1', 'PingSource', 'pingsources');
const dir = mkdtempSync(join(tmpdir(), 'bench-idle-sources-'));

const serve = spawn(process.execPath, [join(root, 'packages/cluster-api/dist/cli.js'), 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--broker-port', '0', '--disable', 'node,gateway'], { stdio: ['ignore', 'pipe', 'pipe'] });
process.on('exit', () => serve.kill('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(130));
await new Promise((resolve, reject) => {
  let out = '';
  const onData = (d) => {
    out += d.toString();
    if (out.includes('"msg":"listening"')) resolve();
  };
  serve.stdout.on('data', onData);
  serve.stderr.on('data', onData);
  serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out.slice(-2000)}`)));
});
const kube = KubeClient.fromKubeconfig({ kubeconfig: join(dir, 'data', 'kubeconfig.yaml') });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const cpuMs = () => {
  const fields = readFileSync(`/proc/${serve.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime + stime, at 100 ticks/s
};
/** serve's CPU over a quiet window, as % of one core. */
const window = async () => {
  const before = cpuMs();
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  return ((cpuMs() - before) / (performance.now() - t0)) * 100;
};
const until = async (what, fn) => {
  for (let i = 0; i < 600; i++) {
    if (await fn()) return;
    await sleep(200);
  }
  throw new Error(`timed out: ${what}`);
};
const served = () => kube.list(pingSources, { namespace: 'default' }).then(() => true, () => false);

await until('PingSources served', served);
say(`load average before: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const idle = [];
const loaded = [];
await sleep(5000);
for (let round = 0; round < ROUNDS; round++) {
  idle.push(await window());
  say(`round ${round + 1}: 0 sources ${idle.at(-1).toFixed(2)} %`);
  await Promise.all(Array.from({ length: COUNT }, (_, i) => kube.create(pingSources, {
    metadata: { name: `hourly-${i}`, namespace: 'default' },
    spec: { schedule: '0 * * * *', data: '{"n":1}', contentType: 'application/json', sink: { uri: 'http://127.0.0.1:9/' } },
  }, { namespace: 'default' })));
  await until('every PingSource Ready', async () => (await kube.list(pingSources, { namespace: 'default' })).items
    .filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === COUNT);
  await sleep(5000);
  const versions = async () => new Map((await kube.list(pingSources, { namespace: 'default' })).items.map((p) => [p.metadata.name, p.metadata.resourceVersion]));
  const before = await versions();
  loaded.push(await window());
  const after = await versions();
  const written = [...after].filter(([name, rv]) => before.get(name) !== rv).length;
  say(`round ${round + 1}: ${COUNT} sources ${loaded.at(-1).toFixed(2)} % (${written} of them written during the window)`);
  await Promise.all(Array.from({ length: COUNT }, (_, i) => kube.delete(pingSources, `hourly-${i}`, { namespace: 'default' })));
  await until('every PingSource gone', async () => (await kube.list(pingSources, { namespace: 'default' })).items.length === 0);
  await sleep(5000);
}
say(`load average after: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
const minute = new Date().getUTCMinutes();
if (minute === 59 || minute === 0) say('note: a window may have crossed the hour, when the hourly sources fire');
console.log(`| serve CPU, idle, % of a core (median of ${ROUNDS} × ${SECONDS} s) | ${median(idle).toFixed(2)} with 0 PingSources | ${median(loaded).toFixed(2)} with ${COUNT} hourly PingSources |`);
kube.close();
serve.kill('SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.exit(0);
