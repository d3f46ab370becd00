/**
 * The oci runtime: every container runs from an OCI bundle under runc, supervised by conmon
 * (runc.ts), in a pod sandbox that is a network namespace of its own on the node's bridge (cni.ts).
 * A container sees only its image (an overlay over the image unpacked once per digest, shared
 * read-only; a copy where overlayfs does not mount), its volumes, the pod's /etc/hosts and
 * /etc/hostname, and for a function image the node's Node.js (node-binary.ts); it runs as its
 * security context says (security.ts) with its limits in cgroups (spec.ts). Exec runs in the
 * container with its own user, capabilities and seccomp (`runc exec --process`); attach streams
 * its output as it is logged. What runs outlives the agent: its sandboxes and containers are
 * recorded on disk (state.ts) and taken back when the agent starts again (recover). Pod networks
 * are made ahead of need (sandbox-pool.ts): a pod that needs nothing of its own at CNI ADD takes
 * one, and its sandbox starts without waiting for the plugins.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, watch, writeFileSync, writeSync, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { FUNCTION_IMAGE_KIND, FUNCTION_IMAGE_LABEL } from '@func/oci';
import type { PodNetwork } from '../../pod-network.js';
import { clientGone, type ContainerConfig, type ContainerStatus, type ImageSpec, type PodSandboxConfig, type RuntimeService, type StreamOptions } from '../cri.js';
import type { ImageStore } from '../image-store.js';
import { newId, RecordedRuntime } from '../records.js';
import { readContainerLog } from '../../logs/log-reader.js';
import { formatResolvConf, parseResolvConf, podResolvConf } from '../../dns/resolv-conf.js';
import { DefaultLogLimits, pruneRotated, rotatedName, type LogLimits } from '../../logs/logs.js';
import { containerArgv, imageEnv } from '../process/launch.js';
import { PodNetworks, type PortMapping } from './cni.js';
import type { OciHost } from './host.js';
import { nodeBinaryMounts } from './node-binary.js';
import { Runc } from './runc.js';
import { FunctionUser, identity, security } from './security.js';
import { bundleConfig, type BundleMount } from './spec.js';
import { chownForFsGroup, mountRootfs, unmountRootfs } from './rootfs.js';
import { ServiceAddresses } from './service-addresses.js';
import { WatchedLog } from './watched-log.js';
import { drain, firstSize, followSizes, onTerminal, script } from '../terminal.js';
import { RuntimeState, type SandboxRecord } from './state.js';
import { SandboxPool, type PooledNetwork } from './sandbox-pool.js';
import { cgroupUsage, type Usage } from '../../stats/usage.js';


export interface OciRuntimeOptions {
  images: ImageStore;
  network: PodNetwork;
  host: OciHost;
  /** The node's data directory: bundles under `<dataDir>/oci`. */
  dataDir: string;
  /** The node's address (a hostNetwork pod's IP). */
  hostIP: string;
  /** The cluster DNS server's address and domain for pods' resolv.conf (none: the host's, as the kubelet without --cluster-dns). */
  dns?: { server: string; zone: string };
  /** When a container's log file rotates, and how many are kept (the kubelet's container log manager; default 10 MiB, 5). */
  logLimits?: LogLimits;
  /** Pod networks kept ready ahead of need (sandbox-pool.ts; default 2, 0: none). */
  sandboxPool?: number;
}

/** Pod networks kept ready by default. */
export const DefaultSandboxPool = 2;

type Sandbox = SandboxRecord;

interface Instance {
  status: ContainerStatus;
  sandboxId: string;
  bundle: string;
  log?: WatchedLog;
  exited: Promise<ContainerStatus>;
  settle(status: ContainerStatus): void;
}

/** The host's resolv.conf, what a pod's is made from. */
const hostResolvConf = () => {
  try {
    return parseResolvConf(readFileSync('/etc/resolv.conf', 'utf8'));
  } catch {
    return parseResolvConf('');
  }
};

const DefaultPath = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const isLoopback = (cidr: string) => cidr.startsWith('127.');

/** Names of this node's bridge, namespaces, runc root and cgroups: a hash of its data directory, so two nodes on one machine never share one. */
export const nodeKey = (dataDir: string): string => createHash('sha256').update(dataDir).digest('hex').slice(0, 8);

export class OciRuntime extends RecordedRuntime<Sandbox, Instance> implements RuntimeService {
  readonly name = 'oci';
  readonly reporting = 'kubelet';
  readonly key: string;
  private readonly runc: Runc;
  private readonly networks: PodNetworks;
  /** The node's Service clusterIPs as addresses of the host, for its service proxy. */
  readonly serviceAddresses: ServiceAddresses;
  private readonly dir: string;
  private readonly exits: string;
  private readonly cgroupParent: string;
  private readonly state: RuntimeState;
  private readonly pool: SandboxPool;
  private watcher?: FSWatcher;
  private sweep?: NodeJS.Timeout;
  private cleared?: Promise<void>;

  constructor(private readonly opts: OciRuntimeOptions) {
    super();
    this.key = nodeKey(opts.dataDir);
    this.dir = join(opts.dataDir, 'oci');
    this.exits = join(this.dir, 'exits');
    this.cgroupParent = `/func-${this.key}`;
    this.state = new RuntimeState(this.dir, join(this.dir, 'containers'));
    this.runc = new Runc({ runc: opts.host.runc, conmon: opts.host.conmon, root: `/run/func-runc/${this.key}`, exits: this.exits, sockets: join(this.dir, 'sockets') });
    this.serviceAddresses = new ServiceAddresses(`lo:${this.key}`);
    this.networks = new PodNetworks({ cniPath: opts.host.cniPath, name: `func${this.key}`, bridge: `fbr${this.key}`, ipamDir: join(this.dir, 'ipam') });
    this.pool = new SandboxPool({ networks: this.networks, state: this.state, size: opts.sandboxPool ?? DefaultSandboxPool, cidr: () => opts.network.cidr });
  }

  /** The pod networks ready to be taken (sandbox-pool.ts). */
  get pooledNetworks(): readonly PooledNetwork[] {
    return this.pool.entries;
  }

  /** The node's own runtime is `func` (the node IPAM controller allocates pod CIDRs to func nodes), here over runc. */
  version() {
    return { runtimeName: 'func', runtimeVersion: `0.1.0-oci.runc-${this.opts.host.version}` };
  }

  /**
   * What an earlier run of this node left is adopted or removed (recover), once, before the first
   * sandbox: the agent calls it as it starts, before it reads its pods.
   */
  ready(): Promise<void> {
    return (this.cleared ??= (async () => {
      for (const d of [this.exits, join(this.dir, 'sockets'), join(this.dir, 'containers')]) mkdirSync(d, { recursive: true });
      await this.recover();
      this.watcher = watch(this.exits, (_event, name) => name && this.exitedNow(String(name)));
      this.sweep = setInterval(() => this.sweepExits(), 2000).unref();
      void this.opts.network.ready.then(() => this.pool.fill());
    })());
  }

  async prepareImage(image: ImageSpec): Promise<void> {
    await this.opts.images.rootfsImage(image.image);
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    await this.ready();
    const { network, hostIP } = this.opts;
    await network.ready;
    const cidr = network.cidr ?? '';
    const spec = config.pod.spec;
    const ports: PortMapping[] = [...(spec.initContainers ?? []), ...spec.containers].flatMap((c) => (c.ports ?? []).filter((p) => p.hostPort).map((p) => ({ hostPort: p.hostPort!, containerPort: p.containerPort, protocol: (p.protocol ?? 'TCP').toLowerCase() })));
    // A pooled network's id (host-local's record of its address, its namespace's name) becomes the sandbox's.
    const pooled = spec.hostNetwork || ports.length ? undefined : this.pool.take(cidr);
    const id = pooled?.id ?? newId();
    let ip = hostIP;
    let netns: string | undefined;
    if (pooled) ({ ip, netns } = pooled);
    else if (!spec.hostNetwork) {
      if (!cidr || isLoopback(cidr)) throw new Error(`the oci runtime needs a pod CIDR outside 127.0.0.0/8 for its bridge (this node's is ${cidr || 'unset'}); give the cluster a --cluster-cidr of private addresses`);
      ({ ip, netns } = await this.networks.add(id, cidr, ports));
    }
    const etc = join(config.podDir, 'etc');
    try {
      mkdirSync(etc, { recursive: true });
      writeFileSync(join(etc, 'hosts'), `127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n${ip}\t${config.hostname}\n`);
      writeFileSync(join(etc, 'hostname'), `${config.hostname}\n`);
      writeFileSync(join(etc, 'resolv.conf'), formatResolvConf(podResolvConf(config.pod, this.opts.dns?.server, this.opts.dns?.zone ?? 'cluster.local', hostResolvConf())));
    } catch (err) {
      // No sandbox: its network (its own, or the pooled one it took) is released.
      if (netns) await this.networks.del(id, cidr, pooled ? [] : ports);
      if (pooled) this.pool.taken(pooled);
      throw err;
    }
    const sandbox: Sandbox = { config, netns, cidr, ports: spec.hostNetwork ? [] : ports, etc, status: { id, metadata: config.metadata, state: 'SANDBOX_READY', createdAt: Date.now(), network: { ip } } };
    this.sandboxes.set(id, sandbox);
    this.state.saveSandbox(sandbox);
    if (pooled) this.pool.taken(pooled);
    return id;
  }

  /** Kills what still runs in the sandbox (the agent stopped its containers gracefully first), then its network. */
  async stopPodSandbox(id: string): Promise<void> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return;
    const running = this.of(id).filter((c) => c.status.state === 'CONTAINER_RUNNING');
    await Promise.all(running.map((c) => this.runc.kill(c.status.id, 'KILL').catch(() => undefined)));
    await Promise.all(running.map((c) => c.exited));
    if (sandbox.status.state === 'SANDBOX_READY' && sandbox.netns) await this.networks.del(id, sandbox.cidr, sandbox.ports);
    sandbox.status.state = 'SANDBOX_NOTREADY';
    this.state.saveSandbox(sandbox);
  }

  override async removePodSandbox(id: string): Promise<void> {
    await this.stopPodSandbox(id);
    await Promise.all(this.of(id).map((c) => this.removeContainer(c.status.id)));
    await super.removePodSandbox(id);
    this.state.forgetSandbox(id);
  }

  /** The bundle: rootfs, config.json from the image, the container and the pod; CreateContainerConfigError / CreateContainerError when it cannot run. */
  async createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    const sandbox = this.sandbox(sandboxId);
    const pod = sandbox.config.pod;
    const image = await this.opts.images.rootfsImage(config.image.image);
    const isFunction = image.config.Labels?.[FUNCTION_IMAGE_LABEL] === FUNCTION_IMAGE_KIND;
    const env: Record<string, string> = { PATH: DefaultPath, ...imageEnv(image.config), HOSTNAME: sandbox.config.hostname, ...config.envs };
    const args = containerArgv(config, image.config, env);
    const id = newId();
    const bundle = join(this.dir, 'containers', id);
    mkdirSync(bundle, { recursive: true });
    try {
      await mountRootfs(image, bundle);
      const user = identity(pod, config.container, image.config.User, join(bundle, 'rootfs'), isFunction ? FunctionUser : undefined);
      const sec = security(pod, config.container, user);
      const psc = pod.spec.securityContext ?? {};
      if (psc.fsGroup !== undefined) chownForFsGroup(config.mounts, sandbox.config.podDir, psc.fsGroup);
      const mounts: BundleMount[] = [
        { destination: '/etc/hosts', source: join(sandbox.etc, 'hosts'), readonly: false },
        { destination: '/etc/hostname', source: join(sandbox.etc, 'hostname'), readonly: false },
        { destination: '/etc/resolv.conf', source: join(sandbox.etc, 'resolv.conf'), readonly: false },
        ...(isFunction ? await nodeBinaryMounts() : []),
        ...config.mounts.map((m) => ({ destination: m.containerPath, source: m.hostPath, readonly: m.readonly })),
      ];
      const spec = bundleConfig({
        args, env: Object.entries(env).map(([k, v]) => `${k}=${v}`), cwd: config.workingDir ?? image.config.WorkingDir ?? '/',
        hostname: sandbox.config.hostname, security: sec, mounts, netns: sandbox.netns,
        hostPID: pod.spec.hostPID === true, hostIPC: pod.spec.hostIPC === true, resources: config.container.resources,
        cgroupsPath: `${this.cgroupParent}/${id}`, cgroupV2: this.opts.host.cgroupV2,
      });
      writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec));
    } catch (err) {
      await unmountRootfs(bundle);
      rmSync(bundle, { recursive: true, force: true });
      throw err;
    }
    const status: ContainerStatus = { id, metadata: config.metadata, state: 'CONTAINER_CREATED', createdAt: Date.now(), image: config.image.image, imageRef: config.image.imageRef ?? '', logPath: config.logPath };
    this.saved(this.instance(status, sandboxId, bundle));
    return id;
  }

  /** A container known to this runtime, not yet exited. */
  private instance(status: ContainerStatus, sandboxId: string, bundle: string): Instance {
    let settle!: (s: ContainerStatus) => void;
    const exited = new Promise<ContainerStatus>((resolve) => (settle = resolve));
    const c: Instance = { status, sandboxId, bundle, exited, settle };
    this.containers.set(status.id, c);
    return c;
  }

  async startContainer(id: string): Promise<void> {
    const c = this.container(id);
    mkdirSync(dirname(c.status.logPath), { recursive: true });
    try {
      await this.runc.create(id, c.bundle, c.status.logPath, join(c.bundle, 'pid'));
      await this.runc.start(id);
    } catch (err) {
      await this.runc.delete(id).catch(() => undefined);
      Object.assign(c.status, { state: 'CONTAINER_EXITED', exitCode: 128, finishedAt: Date.now(), reason: 'StartError', message: (err as Error).message });
      this.saved(c);
      c.settle(c.status);
      return;
    }
    Object.assign(c.status, { state: 'CONTAINER_RUNNING', startedAt: Date.now() });
    this.saved(c);
    c.log = new WatchedLog(c.status.logPath, c.exited);
    this.exitedNow(id);
  }

  /** The container's record rewritten (its bundle may be gone already: then there is none to keep). */
  private saved(c: Instance): void {
    try {
      this.state.saveContainer(c.bundle, { status: c.status, sandboxId: c.sandboxId });
    } catch {
      /* removed meanwhile */
    }
  }

  /** The container's exit, once conmon has written it: its code, OOMKilled when its cgroup's memory limit killed it; then runc forgets it. */
  private exitedNow(id: string): void {
    const c = this.containers.get(id);
    if (!c || c.status.state !== 'CONTAINER_RUNNING') return;
    let text: string;
    let finishedAt: number;
    try {
      const file = join(this.exits, id);
      text = readFileSync(file, 'utf8').trim();
      finishedAt = Math.floor(statSync(file).mtimeMs);
    } catch {
      return;
    }
    if (!text) return;
    const exitCode = Number(text);
    const oom = this.oomKilled(id);
    // When conmon wrote it (the container may have ended while the agent was down).
    Object.assign(c.status, { state: 'CONTAINER_EXITED', exitCode: Number.isFinite(exitCode) ? exitCode : 255, finishedAt, ...(oom ? { reason: 'OOMKilled' } : {}) });
    this.saved(c);
    void this.runc.delete(id).catch(() => undefined).then(() => c.settle(c.status));
  }

  private sweepExits(): void {
    for (const c of this.containers.values()) if (c.status.state === 'CONTAINER_RUNNING') this.exitedNow(c.status.id);
    for (const c of this.containers.values()) if (c.status.state === 'CONTAINER_RUNNING') this.rotateLog(c);
  }

  /**
   * A running container's log past its size, rotated as the kubelet's container log manager does
   * with CRI-O: renamed to `<file>.<time>`, conmon told to reopen its log (`2 0 0` on the bundle's
   * `ctl` fifo, CRI-O's ReopenContainerLog), the oldest rotated files beyond the limit removed. Should
   * conmon not take it, the file is renamed back.
   */
  private rotateLog(c: Instance): void {
    const { maxBytes, maxFiles } = this.opts.logLimits ?? DefaultLogLimits;
    const path = c.status.logPath;
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      return;
    }
    if (size < maxBytes) return;
    const to = rotatedName(path);
    try {
      renameSync(path, to);
      const ctl = openSync(join(c.bundle, 'ctl'), constants.O_WRONLY | constants.O_NONBLOCK);
      try {
        writeSync(ctl, '2 0 0\n');
      } finally {
        closeSync(ctl);
      }
    } catch {
      if (existsSync(to) && !existsSync(path)) renameSync(to, path);
      return;
    }
    pruneRotated(path, maxFiles);
    c.log?.rotated();
  }

  /** Whether the kernel's OOM killer ended a process of the container's memory cgroup. */
  private oomKilled(id: string): boolean {
    const path = `${this.cgroupParent}/${id}`;
    const file = this.opts.host.cgroupV2 ? join('/sys/fs/cgroup', path, 'memory.events') : join('/sys/fs/cgroup/memory', path, 'memory.oom_control');
    try {
      return Number(/oom_kill (\d+)/.exec(readFileSync(file, 'utf8'))?.[1] ?? 0) > 0;
    } catch {
      return false;
    }
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    const c = this.containers.get(id);
    if (!c || c.status.state !== 'CONTAINER_RUNNING') return;
    await this.runc.kill(id, timeoutSeconds > 0 ? 'TERM' : 'KILL').catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => void this.runc.kill(id, 'KILL').catch(() => undefined).then(() => resolve()), timeoutSeconds * 1000);
    });
    await Promise.race([c.exited, killed]);
    clearTimeout(timer);
    await c.exited;
  }

  async removeContainer(id: string): Promise<void> {
    const c = this.containers.get(id);
    if (!c) return;
    await this.stopContainer(id, 0);
    await this.dispose(id, c.bundle);
    this.containers.delete(id);
  }

  /** Whatever is left of a container: runc's state (killed first), its rootfs, bundle and exit file. */
  private async dispose(id: string, bundle: string): Promise<void> {
    await this.runc.kill(id, 'KILL').catch(() => undefined);
    await this.runc.delete(id).catch(() => undefined);
    await unmountRootfs(bundle);
    rmSync(bundle, { recursive: true, force: true });
    rmSync(join(this.exits, id), { force: true });
  }

  /**
   * What an earlier run of this node left, taken back as CRI-O restores its state: sandboxes and
   * containers from their records (state.ts). A container runc still runs is kept as it is (its
   * conmon still writes its log and will write its exit code); one that ended while the agent was
   * down is reported with the exit code conmon wrote, and when conmon wrote none, as exited 255 with
   * reason `Unknown`; one never started is removed. What has no record (a runc container, a bundle,
   * a network namespace of this node) is removed. Sandboxes of pods that no longer exist are the
   * agent's to remove once it has read its pods (NodeAgent's garbage collection).
   */
  private async recover(): Promise<void> {
    const listed = await this.runc.list();
    for (const record of this.state.sandboxes()) {
      if (record.netns && !existsSync(record.netns)) record.status.state = 'SANDBOX_NOTREADY';
      this.sandboxes.set(record.status.id, record);
    }
    for (const { bundle, record } of this.state.bundles()) {
      if (!record || !this.sandboxes.has(record.sandboxId) || record.status.state === 'CONTAINER_CREATED') {
        await this.dispose(record?.status.id ?? basename(bundle), bundle);
        continue;
      }
      const c = this.instance(record.status, record.sandboxId, bundle);
      const { status } = c;
      if (status.state !== 'CONTAINER_RUNNING') {
        c.settle(status);
        continue;
      }
      c.log = new WatchedLog(status.logPath, c.exited);
      this.exitedNow(status.id);
      if (status.state === 'CONTAINER_RUNNING' && listed.get(status.id) !== 'running') {
        Object.assign(status, { state: 'CONTAINER_EXITED', exitCode: 255, finishedAt: Date.now(), reason: 'Unknown', message: 'the container ended while the node agent was down and no exit code was recorded' });
        this.saved(c);
        await this.runc.delete(status.id).catch(() => undefined);
        c.settle(status);
      }
    }
    for (const id of listed.keys()) if (!this.containers.has(id)) await this.dispose(id, join(this.dir, 'containers', id));
    await this.pool.recover(new Set(this.sandboxes.keys()));
    await this.networks.prune(new Set([...this.sandboxes.values()].flatMap((s) => (s.netns && s.status.state === 'SANDBOX_READY' ? [s.status.id] : []))));
  }

  waitContainer(id: string): Promise<ContainerStatus> {
    return this.container(id).exited;
  }

  /** The container's cgroup (v1 or v2, as the host has it). */
  containerStats(id: string): Usage | undefined {
    return this.containers.get(id)?.status.state === 'CONTAINER_RUNNING' ? cgroupUsage(`${this.cgroupParent}/${id}`, this.opts.host.cgroupV2) : undefined;
  }

  containerLog(id: string): WatchedLog | undefined {
    return this.containers.get(id)?.log;
  }

  portForward(sandboxId: string, port: number): { host: string; port: number } | undefined {
    const ip = this.sandboxes.get(sandboxId)?.status.network.ip;
    return ip ? { host: ip, port } : undefined;
  }

  /**
   * `cmd` in the running container as its own process runs (user, env, cwd, capabilities, seccomp):
   * its exit code. With a tty (where the node has `script`), `runc exec -t` in the foreground: runc
   * makes the container's pty and copies between it and its own terminal, which needs to be one
   * (runc opens /dev/tty otherwise), so runc runs on script's pty (terminal.ts); the client's sizes
   * are set on script's pty, and runc passes them on to the container's.
   */
  async exec(containerId: string, cmd: string[], streams: StreamOptions): Promise<{ exitCode: number }> {
    const c = this.container(containerId);
    if (c.status.state !== 'CONTAINER_RUNNING') throw new Error(`container ${containerId} is not running`);
    if (cmd.length === 0) throw new Error('no command given');
    const tty = streams.tty && !!script;
    const spec = JSON.parse(readFileSync(join(c.bundle, 'config.json'), 'utf8')) as { process: Record<string, unknown> };
    const name = join(c.bundle, `exec-${newId().slice(0, 12)}`);
    const processFile = `${name}.json`;
    const ttyFile = `${name}.tty`;
    writeFileSync(processFile, JSON.stringify({ ...spec.process, args: cmd, terminal: tty }));
    const runcArgs = ['--root', this.runc.opts.root, 'exec', ...(tty ? ['-t'] : []), '--process', processFile, containerId];
    // The client's first size (sent as it starts) is the terminal's from the start; later ones follow it.
    const sizes = tty && streams.resize ? await firstSize(streams.resize, 500) : undefined;
    const [file, args] = tty ? onTerminal([this.opts.host.runc, ...runcArgs], ttyFile, sizes?.first) : [this.opts.host.runc, runcArgs];
    try {
      return await new Promise((resolve, reject) => {
        const child = spawn(file, args, { stdio: [streams.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
        if (streams.stdin) {
          // The command may end before its input does: what is left goes nowhere, and no EPIPE ends the agent.
          child.stdin!.on('error', () => undefined);
          streams.stdin.pipe(child.stdin!);
          child.once('close', () => streams.stdin!.unpipe(child.stdin!));
        }
        if (sizes) void followSizes(sizes.rest, ttyFile);
        else if (streams.resize) void drain(streams.resize);
        child.stdout!.on('data', (b: Buffer) => streams.stdout?.write(b));
        child.stderr!.on('data', (b: Buffer) => (streams.tty ? streams.stdout : streams.stderr)?.write(b));
        // A client gone ends the command: runc passes SIGTERM on to it; script ends its session.
        let done = false;
        void clientGone(streams).then(() => done || child.kill('SIGTERM'));
        child.once('error', reject);
        child.once('close', (code, signal) => {
          done = true;
          resolve({ exitCode: code ?? (signal ? 128 + 9 : 1) });
        });
      });
    } finally {
      rmSync(processFile, { force: true });
      rmSync(ttyFile, { force: true });
    }
  }

  /**
   * The container's output from now on, as it is logged, until it exits: stdout and stderr each on
   * its own stream (read from the log by stream), or with a tty, or without a stderr stream, both on
   * stdout in the order written. No stdin: see the README (conmon's attach socket).
   */
  async attach(containerId: string, streams: StreamOptions): Promise<void> {
    const c = this.container(containerId);
    if (c.status.state !== 'CONTAINER_RUNNING' || !c.log) throw new Error(`container ${containerId} is not running`);
    if (streams.resize) void drain(streams.resize);
    const follow = (out: NodeJS.WritableStream, stream?: 'stdout' | 'stderr') => readContainerLog(c.status.logPath, { follow: true, tailLines: 0, stream }, out as Writable, c.log);
    const split = !streams.tty && !!streams.stderr;
    if (split) await Promise.all([streams.stdout && follow(streams.stdout, 'stdout'), follow(streams.stderr!, 'stderr')]);
    else if (streams.stdout) await follow(streams.stdout);
    else await c.exited;
  }

  /** Stops every container of this node and removes its namespaces, bridge, cgroups and runc state: the agent's stop, and the start of a new run. */
  async clear(): Promise<void> {
    for (const id of (await this.runc.list()).keys()) {
      await this.runc.kill(id, 'KILL').catch(() => undefined);
      await this.runc.delete(id).catch(() => undefined);
    }
    const containers = join(this.dir, 'containers');
    if (existsSync(containers)) for (const name of readdirSync(containers)) await unmountRootfs(join(containers, name));
    await this.networks.clear();
    // runc removes a container's cgroup on delete; the node's parent cgroup is ours to remove (v1: one per hierarchy).
    const hierarchies = this.opts.host.cgroupV2 ? [''] : readdirSync('/sys/fs/cgroup');
    for (const h of hierarchies) {
      try {
        rmdirSync(join('/sys/fs/cgroup', h, this.cgroupParent));
      } catch {
        /* not there, or not a hierarchy */
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
    rmSync(this.runc.opts.root, { recursive: true, force: true });
  }

  /** The agent's stop: everything of this node goes (containers were stopped by their pods' workers first; the service proxy has stopped). */
  async close(): Promise<void> {
    this.watcher?.close();
    clearInterval(this.sweep);
    await this.serviceAddresses.clear();
    await this.pool.close();
    if (this.cleared) await this.clear();
  }
}
