/**
 * The oci runtime on a real machine (root, runc, conmon, the CNI plugins): pods run under runc in
 * network namespaces of their own on the node's bridge, with IPs of the node's pod CIDR. An image
 * built here from busybox-static and pushed to a real docker-registry is pulled and runs and logs;
 * a function image runs with the node's Node.js, as a non-root uid, and cannot read the node's
 * secrets; runAsNonRoot with a root image is CreateContainerConfigError; pods reach each other by
 * pod IP; port 8080 of the host stays free while function pods listen on theirs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { networkInterfaces } from 'node:os';
import { PassThrough, Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { privatePodCidr } from '../../src/node/runtime/oci/pod-cidr.js';
import type { RunningRegistry } from '../../../oci/test/registry-server.js';
import { busyboxInRegistry, execIn, ociMissing, ociOf } from '../support/oci-fixtures.js';
import { eventsOf, isReady, podUntil, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const cidr = privatePodCidr(`oci-runtime-test-${process.pid}`);

describe.skipIf(ociMissing)(`the oci runtime${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  const current = useNodeCluster({ nodes: [{ name: 'oci-a', options: { containerRuntime: 'oci', logLimits: { maxBytes: 64 * 1024, maxFiles: 3 } } }], nodeControllers: { clusterCidr: cidr, nodeCidrMaskSize: 24 } });
  let registry: RunningRegistry;
  let busybox: string;
  const agent = () => current.cluster.agents.get('oci-a')!;

  beforeAll(async () => {
    ({ registry, ref: busybox } = await busyboxInRegistry(join(current.cluster.dir, 'scratch')));
  }, 60_000);
  afterAll(async () => {
    await registry?.stop();
  });

  it('pulls an image from a registry and runs it under runc in the pod\'s own network namespace, with an IP of the node\'s pod CIDR; its log is the container\'s output', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, { metadata: { name: 'bb' }, spec: { containers: [{ name: 'bb', image: busybox, command: ['sh', '-c', 'echo hello from busybox; id; exec sleep 3600'] }] } });
    const pod = await podUntil(kube, 'bb', 'Ready', isReady, 60_000);
    expect(pod.status.podIP.startsWith(cidr.split('.').slice(0, 2).join('.') + '.')).toBe(true);
    expect(pod.status.containerStatuses[0].containerID).toMatch(/^func:\/\/[0-9a-f]{64}$/);
    expect(pod.status.qosClass).toBe('BestEffort');
    const reasons = (await eventsOf(kube, 'bb')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Pulling', 'Pulled', 'Created', 'Started']));
    const log = async () => (await (await kube.logs('bb', {})).setEncoding('utf8').toArray()).join('');
    await until('bb logged', async () => (await log()).includes('uid=0(root)'));
    expect(await log()).toBe('hello from busybox\nuid=0(root) gid=0(root) groups=0(root)\n');
  }, 90_000);

  it('a function pod runs with the node\'s Node.js as a non-root uid and sees none of the node\'s files: not admin.token, the CA key or state.db', async () => {
    const { kube, cluster } = current;
    // What serve keeps in its data directory, here in the cluster's (the node's data dir is below it).
    writeFileSync(join(cluster.dir, 'admin.token'), 'secret-admin-token\n');
    writeFileSync(join(cluster.dir, 'state.db'), 'SQLite format 3\0');
    expect(existsSync(join(cluster.dir, 'tls', 'ca.key'))).toBe(true);
    await kube.create(Resources.pods, { metadata: { name: 'fn' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
    const pod = await podUntil(kube, 'fn', 'Ready', isReady, 60_000);
    await until('the function answers on its pod IP', () => fetch(`http://${pod.status.podIP}:8080/`).then((r) => r.ok, () => false));
    const who = await execIn(agent(), pod, ['node', '-e', 'console.log(process.getuid(), process.getgid())']);
    expect(who.stdout).toBe('65532 65532\n');
    const paths = [join(cluster.dir, 'admin.token'), join(cluster.dir, 'state.db'), join(cluster.dir, 'tls', 'ca.key'), '/etc/shadow'];
    const tries = await execIn(agent(), pod, ['node', '-e', `for (const p of ${JSON.stringify(paths)}) { try { require('fs').readFileSync(p); console.log('READ', p) } catch (e) { console.log(e.code, p) } }`]);
    expect(tries.stdout.split('\n').filter(Boolean).map((l) => l.split(' ')[0])).toEqual(['ENOENT', 'ENOENT', 'ENOENT', 'ENOENT']);
    // Its own token is there, readable by its uid; the host's processes are not visible.
    const token = await execIn(agent(), pod, ['node', '-e', 'console.log(require("fs").readFileSync("/var/run/secrets/kubernetes.io/serviceaccount/token", "utf8").split(".").length, require("fs").readdirSync("/proc").filter((n) => /^\\d+$/.test(n)).length < 10)']);
    expect(token).toEqual({ exitCode: 0, stdout: '3 true\n', stderr: '' });
  }, 90_000);

  it('a security context as the kubelet and runc apply it: user, groups, fsGroup on volumes, capabilities, no_new_privs, a read-only root, RuntimeDefault seccomp', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, {
      metadata: { name: 'locked' },
      spec: {
        securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000, supplementalGroups: [4000] },
        volumes: [{ name: 'scratch', emptyDir: {} }],
        containers: [{
          name: 'bb', image: busybox, command: ['sleep', '3600'], volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] }, seccompProfile: { type: 'RuntimeDefault' } },
        }],
      },
    });
    const pod = await podUntil(kube, 'locked', 'Ready', isReady, 60_000);
    const id = await execIn(agent(), pod, ['id']);
    expect(id.stdout).toMatch(/^uid=1000 gid=3000 groups=/);
    expect(id.stdout.trim().split('groups=')[1]!.split(',').map(Number).sort()).toEqual([2000, 3000, 4000]);
    const status = (await execIn(agent(), pod, ['cat', '/proc/self/status'])).stdout;
    const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1];
    expect({ NoNewPrivs: field('NoNewPrivs'), Seccomp: field('Seccomp'), CapBnd: field('CapBnd') }).toEqual({ NoNewPrivs: '1', Seccomp: '2', CapBnd: '0000000000000400' });
    expect((await execIn(agent(), pod, ['touch', '/made'])).exitCode).not.toBe(0);
    expect((await execIn(agent(), pod, ['sh', '-c', 'touch /scratch/made && ls -ln /scratch/made'])).stdout).toMatch(/ 1000 +2000 /);
    // The host's processes are not there (a pid namespace of its own), and /proc/keys is masked (/dev/null over it).
    const pids = Number((await execIn(agent(), pod, ['sh', '-c', 'ls /proc | grep -c "^[0-9]"'])).stdout.trim());
    expect(pids).toBeGreaterThan(0);
    expect(pids).toBeLessThan(10);
    expect((await execIn(agent(), pod, ['ls', '-l', '/proc/keys'])).stdout).toMatch(/^c/);
  }, 90_000);

  it('runAsNonRoot with an image that runs as root: CreateContainerConfigError with the kubelet\'s message', async () => {
    const { kube } = current;
    const created = await kube.create<Obj>(Resources.pods, { metadata: { name: 'nonroot' }, spec: { securityContext: { runAsNonRoot: true }, containers: [{ name: 'bb', image: busybox, command: ['sleep', '3600'] }] } });
    const pod = await podUntil(kube, 'nonroot', 'CreateContainerConfigError', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerConfigError', 60_000);
    expect(pod.status.containerStatuses[0].state.waiting.message).toBe(`container has runAsNonRoot and image will run as root (pod: "nonroot_default(${created.metadata.uid})", container: bb)`);
  }, 90_000);

  it('limits in cgroups: limits.memory 64Mi and 200 MB allocated is OOMKilled (137) and restarted; cpu quota and shares, a pids limit; qosClass on every pod', async () => {
    const { kube } = current;
    const hog = ['node', '-e', 'const a = []; for (let i = 0; i < 200; i++) a.push(Buffer.alloc(1 << 20, 1)); console.log("allocated")'];
    await kube.create(Resources.pods, { metadata: { name: 'hog' }, spec: { containers: [{ name: 'fn', image: 'probe:v1', command: hog, resources: { limits: { memory: '64Mi' } } }] } });
    const pod = await podUntil(kube, 'hog', 'OOMKilled and restarted', (p) => p.status?.containerStatuses?.[0]?.restartCount >= 1 && p.status.containerStatuses[0].lastState?.terminated, 60_000);
    expect(pod.status.containerStatuses[0].lastState.terminated).toMatchObject({ exitCode: 137, reason: 'OOMKilled' });
    expect(pod.status.qosClass).toBe('Burstable');

    await kube.create(Resources.pods, { metadata: { name: 'capped' }, spec: { containers: [{ name: 'bb', image: busybox, command: ['sleep', '3600'], resources: { limits: { cpu: '500m', memory: '32Mi' } } }] } });
    const capped = await podUntil(kube, 'capped', 'Ready', isReady, 60_000);
    expect(capped.status.qosClass).toBe('Guaranteed');
    const cgroup = (await execIn(agent(), capped, ['cat', '/proc/self/cgroup'])).stdout;
    const path = /:memory:(\S+)/.exec(cgroup)?.[1] ?? /^0::(\S+)/m.exec(cgroup)![1]!;
    const v2 = !/:memory:/.test(cgroup);
    const read = (ctl: string, file: string) => readFileSync(join('/sys/fs/cgroup', v2 ? '' : ctl, path, file), 'utf8').trim();
    if (v2) {
      expect([read('', 'cpu.max'), read('', 'memory.max'), read('', 'pids.max')]).toEqual(['50000 100000', String(32 * 2 ** 20), '4096']);
    } else {
      expect([read('cpu', 'cpu.cfs_quota_us'), read('cpu', 'cpu.cfs_period_us'), read('cpu', 'cpu.shares'), read('memory', 'memory.limit_in_bytes'), read('pids', 'pids.max')])
        .toEqual(['50000', '100000', '512', String(32 * 2 ** 20), '4096']);
    }
  }, 120_000);

  it('pods reach each other by pod IP over the node\'s bridge; port 8080 of the host stays free while function pods listen on theirs', async () => {
    const { kube } = current;
    const fn = await podUntil(kube, 'fn', 'Ready', isReady, 60_000);
    const bb = await podUntil(kube, 'bb', 'Ready', isReady, 60_000);
    expect(fn.status.podIP).not.toBe(bb.status.podIP);
    const got = await execIn(agent(), bb, ['wget', '-qO-', `http://${fn.status.podIP}:8080/`]);
    expect(got.exitCode).toBe(0);
    // No socket of the host's network namespace listens on the function's address; the host's own 8080 is free to bind.
    const listening = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).filter((l) => l.trim().split(/\s+/)[3] === '0A').map((l) => l.trim().split(/\s+/)[1]!);
    const hex = (ip: string, port: number) => `${Buffer.from(ip.split('.').map(Number).reverse()).toString('hex').toUpperCase()}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
    expect(listening).not.toContain(hex(fn.status.podIP, 8080));
    const bound = await new Promise<string>((resolve) => {
      const server = createServer().once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error')).listen(8080, '0.0.0.0', () => server.close(() => resolve('bound')));
    });
    // Another program of this machine may hold 8080 already; it is never one of these pods.
    if (bound !== 'bound') expect(listening.filter((a) => a.endsWith(':1F90')).some((a) => a.startsWith(hex(fn.status.podIP, 0).split(':')[0]!))).toBe(false);
    else expect(bound).toBe('bound');
  }, 90_000);

  it('exec probes run in the container: not Ready until the command succeeds, with its output in the Unhealthy event', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, {
      metadata: { name: 'probed' },
      spec: { containers: [{ name: 'bb', image: busybox, command: ['sleep', '3600'], readinessProbe: { exec: { command: ['cat', '/tmp/ready'] }, periodSeconds: 1 } }] },
    });
    const running = await podUntil(kube, 'probed', 'running', (p) => p.status?.containerStatuses?.[0]?.state?.running, 60_000);
    const unhealthy = await until('an Unhealthy event', async () => (await eventsOf(kube, 'probed')).find((e) => e.reason === 'Unhealthy'));
    expect(unhealthy.message).toBe('Readiness probe failed: cat: can\'t open \'/tmp/ready\': No such file or directory');
    expect(isReady(await podUntil(kube, 'probed', 'still running', () => true))).toBe(false);
    expect((await execIn(agent(), running, ['touch', '/tmp/ready'])).exitCode).toBe(0);
    await podUntil(kube, 'probed', 'Ready', isReady, 30_000);
  }, 90_000);

  it('exec takes stdin; attach streams the container\'s output until it exits, stderr apart when asked', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, {
      metadata: { name: 'talk' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'bb', image: busybox, command: ['sh', '-c', 'while [ ! -e /tmp/go ]; do sleep 0.1; done; echo one; echo two >&2; exit 3'] }] },
    });
    const pod = await podUntil(kube, 'talk', 'running', (p) => p.status?.containerStatuses?.[0]?.state?.running, 60_000);
    const id = String(pod.status.containerStatuses[0].containerID).replace(/^[a-z]+:\/\//, '');
    const runtime = ociOf(agent());
    const out: Buffer[] = [];
    const sink = (into: Buffer[]) => new Writable({ write: (chunk: Buffer, _e, done) => (into.push(chunk), done()) });
    const echoed = await runtime.exec!(id, ['cat'], { stdin: Readable.from([Buffer.from('from stdin\n')]), stdout: sink(out), tty: false });
    expect({ ...echoed, out: Buffer.concat(out).toString() }).toEqual({ exitCode: 0, out: 'from stdin\n' });
    // A command that ends before its input does: the rest goes nowhere, the agent goes on.
    const endless = new PassThrough();
    const early = await runtime.exec!(id, ['echo'], { stdin: endless, tty: false });
    expect(early.exitCode).toBe(0);
    endless.write(Buffer.alloc(1 << 20));
    endless.end();
    // A client that goes away ends its command.
    const leaving = new PassThrough();
    const started = new Promise((resolve) => leaving.once('data', resolve));
    const left = runtime.exec!(id, ['sh', '-c', 'echo started; exec sleep 600'], { stdout: leaving, tty: false });
    await started;
    leaving.destroy();
    expect((await left).exitCode).not.toBe(0);
    const attached: Buffer[] = [];
    const attaching = runtime.attach!(id, { stdout: sink(attached), tty: false });
    // With a stderr stream of its own, each stream gets its own lines.
    const [apart, apartErr]: Buffer[][] = [[], []];
    const attachingApart = runtime.attach!(id, { stdout: sink(apart), stderr: sink(apartErr), tty: false });
    await runtime.exec!(id, ['touch', '/tmp/go'], { tty: false });
    await Promise.all([attaching, attachingApart]);
    expect(Buffer.concat(attached).toString()).toBe('one\ntwo\n');
    expect({ stdout: Buffer.concat(apart).toString(), stderr: Buffer.concat(apartErr).toString() }).toEqual({ stdout: 'one\n', stderr: 'two\n' });
    const done = await podUntil(kube, 'talk', 'terminated', (p) => p.status?.containerStatuses?.[0]?.state?.terminated, 30_000);
    expect(done.status.containerStatuses[0].state.terminated).toMatchObject({ exitCode: 3, reason: 'Error' });
    // A command in a container that has exited, or no command at all, is refused.
    await expect(runtime.exec!(id, ['true'], { tty: false })).rejects.toThrow('is not running');
  }, 90_000);

  it('rotates a container\'s log past its size as the kubelet does (conmon reopens it), keeping the newest files', async () => {
    const { kube } = current;
    // Five bursts of ~100 KB, each past the 64 KiB limit, far enough apart for the node to rotate between them.
    const burst = 'i=0; while [ $i -lt 1500 ]; do echo "burst $b line $i ................................................"; i=$((i+1)); done';
    await kube.create(Resources.pods, { metadata: { name: 'chatty' }, spec: { containers: [{ name: 'bb', image: busybox, command: ['sh', '-c', `for b in 1 2 3 4 5; do ${burst}; sleep 3; done; echo all written; exec sleep 3600`] }] } });
    const pod = await podUntil(kube, 'chatty', 'Ready', isReady, 60_000);
    const dir = join(current.cluster.dir, 'oci-a', 'logs', `default_chatty_${pod.metadata.uid}`, 'bb');
    const log = async () => (await (await kube.logs('chatty', {})).setEncoding('utf8').toArray()).join('');
    await until('all written, in the current file', async () => (await log()).includes('all written'), { timeoutMs: 60_000 });
    const files = readdirSync(dir).sort();
    expect(files[0]).toBe('0.log');
    const rotated = files.filter((f) => /^0\.log\.\d{8}-\d{6}$/.test(f));
    expect(rotated.length).toBeGreaterThanOrEqual(1);
    expect(files.length).toBeLessThanOrEqual(3);
    // Nothing around a rotation was lost: the kept files, oldest first, hold the whole last burst in order, then the end.
    // CRI lines (`<time> <stream> F|P <text>`), a partial (P) one joined to what follows.
    const lines: string[] = [];
    let partial = '';
    for (const f of [...rotated, '0.log']) for (const l of readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean)) {
      const [, , tag, ...text] = l.split(' ');
      partial += text.join(' ');
      if (tag === 'F') (lines.push(partial), (partial = ''));
    }
    const last = lines.filter((l) => l.startsWith('burst 5 ')).map((l) => Number(/line (\d+)/.exec(l)![1]));
    expect(last).toEqual(Array.from({ length: 1500 }, (_, i) => i));
    expect(lines.at(-1)).toBe('all written');
    expect(await log()).toMatch(/all written\n$/);
  }, 120_000);

  it('a hostPort is mapped (portmap) to the pod on the node\'s addresses, and unmapped when the pod goes', async () => {
    const { kube } = current;
    const address = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
    expect(address, 'the machine has a non-loopback IPv4 address').toBeTruthy();
    const hostPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '0.0.0.0', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    await kube.create(Resources.pods, { metadata: { name: 'mapped' }, spec: { containers: [{ name: 'fn', image: 'probe:v1', ports: [{ containerPort: 8080, hostPort }] }] } });
    const pod = await podUntil(kube, 'mapped', 'Ready', isReady, 60_000);
    await until('the function answers on its pod IP', () => fetch(`http://${pod.status.podIP}:8080/`).then((r) => r.ok, () => false));
    await until('the function answers on the node\'s hostPort', () => fetch(`http://${address}:${hostPort}/`).then((r) => r.ok, () => false));
    expect(execFileSync('iptables', ['-t', 'nat', '-S']).toString()).toContain(`--dport ${hostPort}`);
    await kube.delete(Resources.pods, 'mapped');
    await until('mapped gone', () => kube.get(Resources.pods, 'mapped').then(() => false, (err: { code?: number }) => err.code === 404));
    await until('its hostPort rules removed', () => !execFileSync('iptables', ['-t', 'nat', '-S']).toString().includes(`--dport ${hostPort}`));
    expect(pod.spec.containers[0].ports[0].hostPort).toBe(hostPort);
  }, 90_000);
});
