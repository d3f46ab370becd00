/**
 * A node agent killed (SIGKILL) and started again adopts what its oci runtime left running, as
 * the kubelet with CRI-O does: `cluster-api node --container-runtime oci` as its own process, joined
 * to a `serve` without an agent of its own. A container that kept running is the same container
 * (containerID, startedAt, restartCount 0), its log kept flowing to the same file (kubectl logs
 * shows what it wrote while the agent was down) and exec still reaches it; a container killed
 * while the agent was down is reported with conmon's exit code (137) and restarted per its policy;
 * a pod deleted while the agent was down is stopped and deleted for good, and one force-deleted
 * leaves nothing behind (runc container, network namespace, cgroup). What the killed agent had
 * pooled (pod networks made ahead of need) is released: its namespaces and host-local's addresses.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeKey } from '../../src/node/runtime/oci/runtime.js';
import { privatePodCidr } from '../../src/node/runtime/oci/pod-cidr.js';
import { busyboxLayout, ociMissing } from '../support/oci-fixtures.js';
import { cli, haveKubectl, startServe, stopServe, type ServeProcess } from '../serve/process.js';
import { until } from '../../testing/src/poll.js';

const run = promisify(execFile);

let serve: ServeProcess | undefined;
let node: ChildProcess | undefined;
let nodeArgs: string[];
let key: string;
let nodeLog = '';

/** `cluster-api node`, resolved once it logs that it runs. */
function startNode(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [cli, 'node', ...nodeArgs], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      nodeLog += d.toString();
      if (/"msg":"node agent running"/.test(log)) resolve(child);
    });
    child.once('exit', (code, signal) => reject(new Error(`node exited (${code ?? signal}): ${log}`)));
  });
}

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve())));

const kubectl = async (...args: string[]) => {
  const r = await serve!.kubectl(...args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

type Status = { containerID?: string; restartCount: number; ready: boolean; state: { running?: { startedAt: string } }; lastState: { terminated?: { exitCode: number; reason: string } } };
const status = async (pod: string): Promise<Status> => JSON.parse(await kubectl('get', 'pod', pod, '-o', 'jsonpath={.status.containerStatuses[0]}')) as Status;
const containerId = (s: Status) => (s.containerID ?? '').replace(/^[a-z]+:\/\//, '');

const runcIds = () => execFileSync('runc', ['--root', `/run/func-runc/${key}`, 'list', '--quiet']).toString().split('\n').filter(Boolean);
const namespaces = () => execFileSync('ip', ['netns', 'list']).toString().split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`func${key}-`));
const ociDir = () => join(serve!.dir, 'node', 'agent', 'oci');
/** The pooled networks recorded (runtime/oci/sandbox-pool.ts), by id. */
const pooled = (): string[] => {
  try {
    return readdirSync(join(ociDir(), 'pool')).filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -'.json'.length));
  } catch {
    return [];
  }
};
/** The namespaces of sandboxes: the node's but the pool's (read after the namespaces: a pooled one is recorded before it is made). */
const sandboxNamespaces = () => {
  const all = namespaces();
  const pool = new Set(pooled().map((id) => `func${key}-${id.slice(0, 12)}`));
  return all.filter((n) => !pool.has(n));
};
/** host-local's records of this node: the ids its addresses were given to. */
const addressHolders = (): string[] => {
  const d = join(ociDir(), 'ipam', `func${key}`);
  return readdirSync(d).filter((n) => /^\d+\.\d+\.\d+\.\d+$/.test(n)).map((n) => readFileSync(join(d, n), 'utf8').split(/\r?\n/)[0]!);
};

const pod = (name: string, script: string) => JSON.stringify({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { terminationGracePeriodSeconds: 2, containers: [{ name: 'c', image: 'busybox:test', imagePullPolicy: 'Never', command: ['sh', '-c', script] }] },
});

describe.skipIf(ociMissing || !haveKubectl)(`a restarted oci node agent${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  beforeAll(async () => {
    serve = await startServe(['--disable-agent', '--no-broker', '--cluster-cidr', privatePodCidr(`oci-adopt-${process.pid}`)]);
    const data = join(serve.dir, 'data');
    const nodeDir = join(serve.dir, 'node');
    await busyboxLayout(join(nodeDir, 'images'));
    await run(process.execPath, [cli, 'node-credentials', '--data-dir', data, '--name', 'adopter', '--address', '127.0.0.1', '--out', join(serve.dir, 'node.kubeconfig')]);
    nodeArgs = ['--kubeconfig', join(serve.dir, 'node.kubeconfig'), '--container-runtime', 'oci', '--data-dir', join(nodeDir, 'agent'), '--images', join(nodeDir, 'images'), '--address', '127.0.0.1', '--kubelet-port', '0'];
    key = nodeKey(join(nodeDir, 'agent'));
    node = await startNode();
  }, 120_000);

  afterAll(async () => {
    if (node) {
      node.kill('SIGTERM');
      await exited(node);
    }
    await stopServe(serve);
  }, 60_000);

  it('keeps what runs, reports what ended, and removes what was deleted while it was down', async () => {
    const pods = {
      keep: pod('keep', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.2; done'),
      victim: pod('victim', 'echo victim started; exec sleep 3600'),
      gone: pod('gone', 'exec sleep 3600'),
      forced: pod('forced', 'exec sleep 3600'),
    };
    for (const [name, manifest] of Object.entries(pods)) {
      writeFileSync(join(serve!.dir, `${name}.json`), manifest);
      await kubectl('apply', '-f', join(serve!.dir, `${name}.json`));
    }
    await until('every pod Running and Ready', async () => {
      const out = await kubectl('get', 'pods', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.containerStatuses[0].ready} {end}');
      return Object.keys(pods).every((name) => out.includes(`${name}=true`));
    }, { timeoutMs: 90_000 });
    const before = Object.fromEntries(await Promise.all(Object.keys(pods).map(async (name) => [name, await status(name)] as const)));
    await until('keep has logged', async () => (await kubectl('logs', 'keep')).includes('tick 2'));
    expect(sandboxNamespaces().length).toBe(4);
    const stalePool = await until('the pool full', () => pooled().length === 2 && namespaces().length === 6 && pooled());
    expect(addressHolders()).toEqual(expect.arrayContaining(stalePool));

    node!.kill('SIGKILL');
    await exited(node!);
    // While the agent is down: keep goes on logging, victim's process is killed, gone is deleted, forced is force-deleted.
    execFileSync('runc', ['--root', `/run/func-runc/${key}`, 'kill', containerId(before.victim!), 'KILL']);
    expect((await serve!.kubectl('delete', 'pod', 'gone', '--wait=false')).code).toBe(0);
    expect((await serve!.kubectl('delete', 'pod', 'forced', '--force', '--grace-period=0')).code).toBe(0);
    // Left unreadable or unrecorded by a crash: a bundle and a sandbox record that are not JSON, a namespace of this node without a record.
    expect(pooled()).toEqual(stalePool);
    mkdirSync(join(ociDir(), 'containers', 'garbage'));
    writeFileSync(join(ociDir(), 'containers', 'garbage', 'container.json'), '{not json');
    writeFileSync(join(ociDir(), 'sandboxes', 'garbage.json'), 'null');
    execFileSync('ip', ['netns', 'add', `func${key}-000000000000`]);
    const lastTickBefore = Math.max(...[...(await kubectl('logs', 'keep').catch(() => '')).matchAll(/tick (\d+)/g)].map((m) => Number(m[1])), 0);

    node = await startNode();

    const kept = await status('keep');
    expect(kept.containerID).toBe(before.keep!.containerID);
    expect(kept.state.running?.startedAt).toBe(before.keep!.state.running!.startedAt);
    expect(kept.restartCount).toBe(0);
    // The same process kept counting, and what it wrote while the agent was down is in its log.
    const ticks = await until('keep logs after the restart', async () => {
      const n = [...(await kubectl('logs', 'keep')).matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
      return n.length > 0 && n.at(-1)! > lastTickBefore + 2 && n;
    });
    expect(ticks).toEqual(ticks.map((_, i) => i));
    expect(await kubectl('exec', 'keep', '--', 'echo', 'still reachable')).toBe('still reachable\n');
    await until('keep Ready', async () => (await status('keep')).ready);

    const restarted = await until('victim restarted', async () => {
      const s = await status('victim');
      return s.restartCount === 1 && s.state.running && s;
    }, { timeoutMs: 60_000 });
    expect(restarted.lastState.terminated).toMatchObject({ exitCode: 137, reason: 'Error' });
    expect(restarted.containerID).not.toBe(before.victim!.containerID);

    await until('gone deleted for good', async () => (await serve!.kubectl('get', 'pod', 'gone')).code !== 0, { timeoutMs: 60_000 });
    await until('what the deleted pods ran is gone', () => {
      const ids = runcIds();
      return !ids.includes(containerId(before.gone!)) && !ids.includes(containerId(before.forced!)) && sandboxNamespaces().length === 2;
    }, { timeoutMs: 60_000 });
    expect(runcIds()).toEqual(expect.arrayContaining([containerId(before.keep!), containerId(restarted)]));
    const cgroup = (id: string) => ['/sys/fs/cgroup/memory', '/sys/fs/cgroup'].some((root) => existsSync(join(root, `func-${key}`, id)));
    expect(cgroup(containerId(before.forced!))).toBe(false);
    expect(cgroup(containerId(before.keep!))).toBe(true);
    expect(existsSync(join(ociDir(), 'containers', 'garbage'))).toBe(false);
    expect(existsSync(join(ociDir(), 'sandboxes', 'garbage.json'))).toBe(false);
    // What the killed agent pooled is released (a new pool is made); its addresses are free again.
    expect(pooled().filter((id) => stalePool.includes(id))).toEqual([]);
    expect(namespaces().filter((n) => stalePool.some((id) => n === `func${key}-${id.slice(0, 12)}`))).toEqual([]);
    expect(addressHolders().filter((id) => stalePool.includes(id))).toEqual([]);
    expect(nodeLog).toMatch(/"msg":"removing the sandbox of a pod this node no longer has","pod":"default\/forced"/);
  }, 300_000);
});
