/**
 * A third way to run pods plugs into the node agent as one object: a small runtime implementing
 * the CRI-shaped RuntimeService (src/node/runtime/cri.ts), registered through
 * `NodeAgentOptions.runtimes`, runs the pods whose image it takes. Its pods reach Running and
 * Ready, report its container ids and the kubelet's events through the API, and are stopped and
 * removed through it when deleted; what it refuses (CreateContainerError) is the kubelet's waiting
 * state.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { CreateContainerError, type ContainerConfig, type ContainerStatus, type PodSandboxConfig, type PodSandboxStatus, type RuntimeService } from '../../src/node/runtime/cri.js';
import { eventsOf, isReady, podUntil, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

/** Containers that "run" in memory until stopped; every call is recorded. */
class PlugRuntime implements RuntimeService {
  readonly name = 'plug';
  readonly reporting = 'kubelet';
  readonly calls: string[] = [];
  private readonly sandboxes = new Map<string, PodSandboxStatus>();
  private readonly containers = new Map<string, { status: ContainerStatus; sandboxId: string; exited: Promise<ContainerStatus>; exit(): void }>();

  version() {
    return { runtimeName: 'plug', runtimeVersion: '1.0.0' };
  }

  async runPodSandbox(config: PodSandboxConfig) {
    const id = randomBytes(8).toString('hex');
    this.calls.push(`runPodSandbox ${config.metadata.name}`);
    this.sandboxes.set(id, { id, metadata: config.metadata, state: 'SANDBOX_READY', createdAt: Date.now(), network: { ip: '127.99.0.1' } });
    return id;
  }

  async stopPodSandbox(id: string) {
    this.calls.push('stopPodSandbox');
    this.sandboxes.get(id)!.state = 'SANDBOX_NOTREADY';
  }

  async removePodSandbox(id: string) {
    this.calls.push('removePodSandbox');
    this.sandboxes.delete(id);
  }

  podSandboxStatus(id: string) {
    return this.sandboxes.get(id);
  }

  listPodSandbox() {
    return [...this.sandboxes.values()];
  }

  async createContainer(sandboxId: string, config: ContainerConfig) {
    if (config.command?.[0] === 'refuse') throw new CreateContainerError('this runtime refuses the command "refuse"');
    const id = randomBytes(8).toString('hex');
    this.calls.push(`createContainer ${config.metadata.name}`);
    const status: ContainerStatus = { id, metadata: config.metadata, state: 'CONTAINER_CREATED', createdAt: Date.now(), image: config.image.image, imageRef: '', logPath: config.logPath };
    let exit!: () => void;
    const exited = new Promise<ContainerStatus>((resolve) => (exit = () => (Object.assign(status, { state: 'CONTAINER_EXITED', exitCode: 0, finishedAt: Date.now() }), resolve(status))));
    this.containers.set(id, { status, sandboxId, exited, exit });
    return id;
  }

  async startContainer(id: string) {
    this.calls.push('startContainer');
    Object.assign(this.containers.get(id)!.status, { state: 'CONTAINER_RUNNING', startedAt: Date.now() });
  }

  async stopContainer(id: string) {
    this.calls.push('stopContainer');
    this.containers.get(id)?.exit();
  }

  async removeContainer(id: string) {
    this.containers.delete(id);
  }

  containerStatus(id: string) {
    return this.containers.get(id)?.status;
  }

  listContainers() {
    return [...this.containers.values()].map((c) => c.status);
  }

  waitContainer(id: string) {
    return this.containers.get(id)!.exited;
  }

  portForward(sandboxId: string, port: number) {
    const ip = this.sandboxes.get(sandboxId)?.network.ip;
    return ip ? { host: ip, port } : undefined;
  }
}

const plug = new PlugRuntime();
const current = useNodeCluster({ nodes: [{ name: 'node-a', options: { runtimes: [{ runtime: plug, runs: (ref) => ref.startsWith('plug/') }] } }] });

describe('a runtime registered through the agent options', () => {
  it('runs the pods whose image it takes: Running and Ready, its container ids, the kubelet\'s events, removed through it when deleted', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, { metadata: { name: 'plugged' }, spec: { containers: [{ name: 'main', image: 'plug/app:1' }] } });
    const pod = await podUntil(kube, 'plugged', 'Ready', isReady);
    expect(pod.status.podIP).toBe('127.99.0.1');
    const [status] = pod.status.containerStatuses;
    expect(status).toMatchObject({ name: 'main', image: 'plug/app:1', ready: true, started: true, restartCount: 0, state: { running: { startedAt: expect.any(String) } } });
    expect(status.containerID).toMatch(/^plug:\/\/[0-9a-f]{16}$/);
    const events = await until('Created and Started', async () => {
      const reasons = (await eventsOf(kube, 'plugged')).filter((e) => e.source?.component === 'kubelet').map((e: Obj) => `${e.reason}: ${e.message}`);
      return reasons.length >= 2 ? reasons : undefined;
    });
    expect(events.sort()).toEqual(['Created: Created container main', 'Started: Started container main']);
    // Function images still run as processes on the same node: the process runtime took probe:v1.
    await kube.create(Resources.pods, { metadata: { name: 'fn' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
    expect((await podUntil(kube, 'fn', 'Ready', isReady)).status.containerStatuses[0].containerID).toMatch(/^func:\/\//);

    await kube.delete(Resources.pods, 'plugged');
    await until('plugged gone', () => kube.get(Resources.pods, 'plugged').then(() => false, (err: { code?: number }) => err.code === 404));
    await until('its sandbox removed', () => plug.calls.includes('removePodSandbox'));
    expect(plug.calls).toEqual(['runPodSandbox plugged', 'createContainer main', 'startContainer', 'stopContainer', 'stopPodSandbox', 'removePodSandbox']);
  }, 60_000);

  it('a container it refuses to create: CreateContainerError with its message, and a Failed event', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, { metadata: { name: 'refused' }, spec: { containers: [{ name: 'main', image: 'plug/app:1', command: ['refuse'] }] } });
    const pod = await podUntil(kube, 'refused', 'CreateContainerError', (p) => p.status?.containerStatuses?.[0]?.state?.waiting?.reason === 'CreateContainerError');
    expect(pod.status.containerStatuses[0].state.waiting.message).toBe('this runtime refuses the command "refuse"');
    expect(pod.status.phase).toBe('Pending');
    const failed = await until('a Failed event', async () => (await eventsOf(kube, 'refused')).find((e) => e.reason === 'Failed'));
    expect(failed.message).toBe('Error: this runtime refuses the command "refuse"');
  }, 60_000);
});
