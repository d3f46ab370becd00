#!/usr/bin/env node
/**
 * Where an oci pod sandbox's start goes, step by step, as the oci runtime takes them (root, runc,
 * conmon and the CNI plugins needed): the network namespace (`ip netns add`), CNI ADD of `loopback`
 * and of `bridge` with `host-local` IPAM, the container's overlay root, conmon running
 * `runc create`, `runc start`; then the same sandbox's network taken from a pool made ahead (what
 * the pod start waits for then). Prints a table, never asserts.
 *
 *   npm run build && node bench/autoscale/oci-steps.mjs [--rounds 15]
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, copyFileSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { promisify } from 'node:util';
import { ociHost } from '../../packages/cluster-api/dist/node/runtime/oci/host.js';
import { PodNetworks } from '../../packages/cluster-api/dist/node/runtime/oci/cni.js';
import { Runc } from '../../packages/cluster-api/dist/node/runtime/oci/runc.js';
import { privatePodCidr } from '../../packages/cluster-api/dist/node/runtime/oci/pod-cidr.js';
import { SandboxPool } from '../../packages/cluster-api/dist/node/runtime/oci/sandbox-pool.js';
import { RuntimeState } from '../../packages/cluster-api/dist/node/runtime/oci/state.js';
import { median, percentile } from '../lib/stats.mjs';

const run = promisify(execFile);
const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '15' } } });
const host = ociHost();
const dir = mkdtempSync(join(tmpdir(), 'bench-oci-steps-'));
const key = `b${process.pid.toString(16).slice(-5)}`;
const cidr = privatePodCidr(dir).replace(/\.0\.0\/16$/, '.0.0/24');
const opts = { cniPath: host.cniPath, name: `fbench${key}`, bridge: `fbb${key}`, ipamDir: join(dir, 'ipam') };
const networks = new PodNetworks(opts);
const runc = new Runc({ runc: host.runc, conmon: host.conmon, root: join(dir, 'runc'), exits: join(dir, 'exits'), sockets: join(dir, 'sockets') });
for (const d of ['exits', 'sockets', 'lower/bin', 'lower/etc']) mkdirSync(join(dir, d), { recursive: true });
copyFileSync('/bin/busybox', join(dir, 'lower/bin/busybox'));
symlinkSync('busybox', join(dir, 'lower/bin/sh'));
symlinkSync('busybox', join(dir, 'lower/bin/sleep'));

/** One CNI plugin call, as cni.ts makes it. */
const plugin = (type, id, netns, ifname, config) => new Promise((resolve, reject) => {
  const child = spawn(join(host.cniPath, type), [], { env: { PATH: process.env.PATH, CNI_COMMAND: 'ADD', CNI_CONTAINERID: id, CNI_NETNS: netns, CNI_IFNAME: ifname, CNI_PATH: host.cniPath }, stdio: ['pipe', 'ignore', 'ignore'] });
  child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${type} ${code}`))));
  child.stdin.end(JSON.stringify({ cniVersion: '1.0.0', name: opts.name, type, ...config }));
});
const bridge = { bridge: opts.bridge, isGateway: true, isDefaultGateway: true, ipMasq: false, hairpinMode: true, ipam: { type: 'host-local', ranges: [[{ subnet: cidr }]], dataDir: opts.ipamDir } };

const { stdout: specText } = await run(host.runc, ['spec', '--bundle', dir]).then(() => ({ stdout: readFileSync(join(dir, 'config.json'), 'utf8') }));
rmSync(join(dir, 'config.json'));

const steps = { 'ip netns add': [], 'CNI loopback ADD': [], 'CNI bridge ADD (host-local)': [], 'overlay mount': [], 'conmon + runc create': [], 'runc start': [], 'sandbox network, whole (PodNetworks.add)': [], 'sandbox network from a pool (taken)': [] };
const timed = async (name, fn) => {
  const t0 = performance.now();
  const v = await fn();
  steps[name].push(performance.now() - t0);
  return v;
};

try {
  for (let i = 0; i < Number(args.rounds); i++) {
    const id = `${key}${String(i).padStart(4, '0')}`.padEnd(64, '0');
    const name = networks.netnsName(id);
    const netns = `/run/netns/${name}`;
    await timed('ip netns add', () => run('ip', ['netns', 'add', name]));
    await timed('CNI loopback ADD', () => plugin('loopback', id, netns, 'lo', {}));
    await timed('CNI bridge ADD (host-local)', () => plugin('bridge', id, netns, 'eth0', bridge));
    const bundle = join(dir, 'containers', id);
    for (const d of ['rootfs', 'upper', 'work']) mkdirSync(join(bundle, d), { recursive: true });
    await timed('overlay mount', () => run('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${join(dir, 'lower')},upperdir=${join(bundle, 'upper')},workdir=${join(bundle, 'work')}`, join(bundle, 'rootfs')]));
    const spec = JSON.parse(specText);
    spec.process.terminal = false;
    spec.process.args = ['sleep', '30'];
    spec.root = { path: join(bundle, 'rootfs'), readonly: false };
    spec.linux.namespaces = spec.linux.namespaces.map((n) => (n.type === 'network' ? { type: 'network', path: netns } : n));
    writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec));
    await timed('conmon + runc create', () => runc.create(id, bundle, join(bundle, 'log'), join(bundle, 'pid')));
    await timed('runc start', () => runc.start(id));
    await runc.kill(id, 'KILL');
    await runc.delete(id).catch(() => undefined);
    await run('umount', [join(bundle, 'rootfs')]);
    await networks.del(id, cidr, []);
    // The whole network step as the runtime takes it, then taken from a pool made ahead of it.
    const whole = `${id.slice(0, 60)}ffff`;
    await timed('sandbox network, whole (PodNetworks.add)', () => networks.add(whole, cidr, []));
    await networks.del(whole, cidr, []);
  }
  const pool = new SandboxPool({ networks, state: new RuntimeState(dir, join(dir, 'containers')), size: 2, cidr: () => cidr });
  for (let i = 0; i < Number(args.rounds); i++) {
    await pool.fill();
    const entry = await timed('sandbox network from a pool (taken)', () => pool.take(cidr));
    pool.taken(entry);
    await networks.del(entry.id, cidr, []);
  }
  await pool.close();
  const rows = Object.entries(steps).filter(([, xs]) => xs.length);
  console.log(`\n### The oci sandbox's start, step by step (${args.rounds} rounds, medians; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);
  console.log('| step | p50 | p90 |');
  console.log('|---|--:|--:|');
  for (const [name, xs] of rows) console.log(`| ${name} | ${median(xs).toFixed(1)} ms | ${percentile(xs, 90).toFixed(1)} ms |`);
} finally {
  await networks.clear();
  rmSync(dir, { recursive: true, force: true });
}
