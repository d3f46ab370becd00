/**
 * The simulated runtime, as kwok runs pods: a sandbox is an IP of the pod network, a container is
 * Running as soon as it is started and stays so until stopped (then exit code 0); nothing runs,
 * nothing is pulled, no log is written. Its pods are reported kwok's way (`reporting: 'kwok'`).
 */
import type { PodNetwork } from '../../pod-network.js';
import type { ContainerConfig, ContainerStatus, PodSandboxConfig, PodSandboxStatus, RuntimeService } from '../cri.js';
import { newId, RecordedRuntime } from '../records.js';

interface Instance {
  status: ContainerStatus;
  sandboxId: string;
  stopped: Promise<ContainerStatus>;
  stop(): void;
}

export class SimulatedRuntime extends RecordedRuntime<{ status: PodSandboxStatus }, Instance> implements RuntimeService {
  readonly name = 'simulated';
  readonly reporting = 'kwok';

  constructor(private readonly network: PodNetwork) {
    super();
  }

  version() {
    return { runtimeName: 'simulated', runtimeVersion: '0.1.0' };
  }

  async runPodSandbox(config: PodSandboxConfig): Promise<string> {
    await this.network.ready;
    const id = newId();
    this.sandboxes.set(id, { status: { id, metadata: config.metadata, state: 'SANDBOX_READY', createdAt: Date.now(), network: { ip: this.network.allocate(config.metadata.uid) } } });
    return id;
  }

  async stopPodSandbox(id: string): Promise<void> {
    const sandbox = this.sandboxes.get(id);
    if (!sandbox) return;
    for (const c of this.of(id)) c.stop();
    if (sandbox.status.state === 'SANDBOX_READY') this.network.release(sandbox.status.metadata.uid);
    sandbox.status.state = 'SANDBOX_NOTREADY';
  }

  async createContainer(sandboxId: string, config: ContainerConfig): Promise<string> {
    this.sandbox(sandboxId);
    const id = newId();
    const status: ContainerStatus = { id, metadata: config.metadata, state: 'CONTAINER_CREATED', createdAt: Date.now(), image: config.image.image, imageRef: '', logPath: config.logPath };
    let stop!: () => void;
    const stopped = new Promise<ContainerStatus>((resolve) => (stop = () => {
      if (status.state === 'CONTAINER_EXITED') return;
      Object.assign(status, { state: 'CONTAINER_EXITED', exitCode: 0, finishedAt: Date.now(), startedAt: status.startedAt ?? Date.now() });
      resolve(status);
    }));
    this.containers.set(id, { status, sandboxId, stopped, stop });
    return id;
  }

  async startContainer(id: string): Promise<void> {
    Object.assign(this.container(id).status, { state: 'CONTAINER_RUNNING', startedAt: Date.now() });
  }

  async stopContainer(id: string): Promise<void> {
    this.containers.get(id)?.stop();
  }

  async removeContainer(id: string): Promise<void> {
    this.containers.get(id)?.stop();
    this.containers.delete(id);
  }

  waitContainer(id: string): Promise<ContainerStatus> {
    return this.container(id).stopped;
  }

  portForward(sandboxId: string, port: number): { host: string; port: number } | undefined {
    const ip = this.podSandboxStatus(sandboxId)?.network.ip;
    return ip ? { host: ip, port } : undefined;
  }
}
