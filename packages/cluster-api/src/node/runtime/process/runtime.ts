/**
 * The process runtime: each container of a function image is a child process of the agent
 * (process.ts) running the node's own `node` on the unpacked image (launch.ts), its volumes found
 * through a mount root (mount-root.ts). A sandbox is the pod's IP on the node's pod network (a
 * loopback address of its own, or the node's address with a node port per container port in the
 * shared mode); nothing isolates one pod from another. exec and attach: streams.ts.
 */
import { join } from 'node:path';
import { ContainerLog, type LogLimits } from '../../logs/logs.js';
import type { PodNetwork } from '../../pod-network.js';
import type { ContainerConfig, ContainerStatus, ImageSpec, PodSandboxConfig, PodSandboxStatus, RuntimeService, StreamOptions } from '../cri.js';
import type { ImageStore } from '../image-store.js';
import { newId, RecordedRuntime } from '../records.js';
import { launchSpec } from './launch.js';
import { mountRoot } from './mount-root.js';
import { ContainerProcess, type LaunchSpec } from './process.js';
import { attachTo, execInContainer, ExecStartError } from './streams.js';
import { processUsage, type Usage } from '../../stats/usage.js';

export interface ProcessRuntimeOptions {
  images: ImageStore;
  network: PodNetwork;
  logLimits: LogLimits;
}

interface Sandbox {
  status: PodSandboxStatus;
  config: PodSandboxConfig;
}

interface Instance {
  status: ContainerStatus;
  sandboxId: string;
  spec: LaunchSpec;
  /** The container's `stdinOnce`: its stdin closes when the first attached client's input ends. */
  stdinOnce: boolean;
  log?: ContainerLog;
  process?: ContainerProcess;
  exited: Promise<ContainerStatus>;
  settle(status: ContainerStatus): void;
}

/** The PORT a function image listens on when the pod sets none. */
const imagePort = (config: { Env?: string[] }): string => (config.Env ?? []).find((e) => e.startsWith('PORT='))?.slice(5) ?? '8080';

export class ProcessRuntime extends RecordedRuntime<Sandbox, Instance> implements RuntimeService {
  readonly name = 'process';
  readonly reporting = 'kubelet';

  constructor(private readonly opts: ProcessRuntimeOptions) {
    super();
  }

  version() {
    return { runtimeName: 'func', runtimeVersion: '0.1.0' };
  }

  /** Unpacks the image under `<data-dir>/rootfs/<digest>` (once per digest). */
  async prepareImage(image: ImageSpec): Promise<void> {
    await this.opts.images.unpackedImage(image.image);
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    const { network } = this.opts;
    await network.ready;
    const id = newId();
    // The ports the pod's containers will listen on (a function's 8080 when it names none) must be free at its address.
    const spec = config.pod.spec;
    const ports = new Set([8080, ...[...(spec.initContainers ?? []), ...spec.containers].flatMap((c) => (c.ports ?? []).filter((p) => (p.protocol ?? 'TCP') === 'TCP').map((p) => p.containerPort))]);
    const ip = await network.allocateFree(config.metadata.uid, [...ports]);
    this.sandboxes.set(id, { config, status: { id, metadata: config.metadata, state: 'SANDBOX_READY', createdAt: Date.now(), network: { ip } } });
    return id;
  }

  /** Kills what still runs in the sandbox (the agent stopped its containers gracefully first) and releases the pod's address. */
  async stopPodSandbox(id: string): Promise<void> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return;
    const running = this.of(id).filter((c) => c.status.state === 'CONTAINER_RUNNING');
    for (const c of running) c.process?.kill('SIGKILL');
    await Promise.all(running.map((c) => c.exited));
    if (sandbox.status.state === 'SANDBOX_READY') this.opts.network.release(sandbox.config.metadata.uid);
    sandbox.status.state = 'SANDBOX_NOTREADY';
  }

  /** Unpacks the image (once per digest), builds the mount root and the process's argv, env and cwd: CreateContainerError when it cannot run. */
  async createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    const sandbox = this.sandbox(sandboxId);
    const { network } = this.opts;
    const image = await this.opts.images.unpackedImage(config.image.image);
    const mounts = mountRoot(join(sandbox.config.podDir, 'root', config.metadata.name), config.mounts);
    const fixed: Record<string, string> = { HOSTNAME: sandbox.config.hostname, FUNC_HOST: sandbox.status.network.ip };
    // Shared network mode: the function listens on a node port of its own standing for its PORT.
    if (network.mode === 'shared') fixed.PORT = String(await network.hostPort(sandbox.config.metadata.uid, Number(config.envs.PORT ?? imagePort(image.config))));
    const spec = { ...launchSpec({ container: config, image: image.config, imageRoot: image.root, mounts, env: config.envs, fixed }), stdin: config.container.stdin === true };
    const id = newId();
    const status: ContainerStatus = { id, metadata: config.metadata, state: 'CONTAINER_CREATED', createdAt: Date.now(), image: config.image.image, imageRef: config.image.imageRef ?? '', logPath: config.logPath };
    let settle!: (s: ContainerStatus) => void;
    const exited = new Promise<ContainerStatus>((resolve) => (settle = resolve));
    this.containers.set(id, { status, sandboxId, spec, stdinOnce: config.container.stdinOnce === true, exited, settle });
    return id;
  }

  async startContainer(id: string): Promise<void> {
    const c = this.container(id);
    c.log = new ContainerLog(c.status.logPath, this.opts.logLimits);
    c.process = new ContainerProcess(c.spec, c.log);
    Object.assign(c.status, { state: 'CONTAINER_RUNNING', startedAt: c.process.startedAt });
    void c.process.exited.then((exit) => {
      Object.assign(c.status, { state: 'CONTAINER_EXITED', exitCode: exit.exitCode, finishedAt: exit.finishedAt, ...(exit.startError ? { reason: 'StartError', message: exit.startError } : {}) });
      c.settle(c.status);
    });
  }

  async stopContainer(id: string, timeoutSeconds: number): Promise<void> {
    const c = this.containers.get(id);
    if (!c?.process || c.status.state !== 'CONTAINER_RUNNING') return;
    const process = c.process;
    process.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => (process.kill('SIGKILL'), resolve()), timeoutSeconds * 1000);
    });
    await Promise.race([process.exited, killed]);
    clearTimeout(timer);
    await c.exited;
  }

  async removeContainer(id: string): Promise<void> {
    await this.stopContainer(id, 0);
    this.containers.delete(id);
  }

  waitContainer(id: string): Promise<ContainerStatus> {
    return this.container(id).exited;
  }

  /** The container's process (its children are not counted). */
  containerStats(id: string): Usage | undefined {
    const pid = this.containers.get(id)?.process?.pid;
    return pid === undefined ? undefined : processUsage(pid);
  }

  containerLog(id: string): ContainerLog | undefined {
    return this.containers.get(id)?.log;
  }

  /** A command beside the container's process (streams.ts): its environment, directory and user; no pseudo-terminal. */
  exec(id: string, cmd: string[], streams: StreamOptions): Promise<{ exitCode: number }> {
    return execInContainer(this.running(id).spec, cmd, streams);
  }

  /** The running process's output from now on, and its stdin when the container has one. */
  attach(id: string, streams: StreamOptions): Promise<void> {
    const c = this.running(id);
    return attachTo(c.process!, streams, c.stdinOnce);
  }

  private running(id: string): Instance {
    const c = this.containers.get(id);
    if (!c?.process || c.status.state !== 'CONTAINER_RUNNING') throw new ExecStartError(`container ${id} is not running`);
    return c;
  }

  portForward(sandboxId: string, port: number): { host: string; port: number } | undefined {
    const sandbox = this.sandboxes.get(sandboxId);
    if (!sandbox) return undefined;
    return this.opts.network.target(sandbox.config.metadata.uid, port) ?? { host: sandbox.status.network.ip, port };
  }
}
