/**
 * What a runtime keeps of its sandboxes and containers, by id, and the CRI's status, list and
 * remove calls over them: the base of the runtimes that hold their state in memory (process,
 * simulated).
 */
import { randomBytes } from 'node:crypto';
import type { ContainerStatus, PodSandboxStatus } from './cri.js';

/** A new sandbox or container id (64 hex digits, as containerd's). */
export const newId = (): string => randomBytes(32).toString('hex');

export abstract class RecordedRuntime<S extends { status: PodSandboxStatus }, C extends { status: ContainerStatus; sandboxId: string }> {
  protected readonly sandboxes = new Map<string, S>();
  protected readonly containers = new Map<string, C>();

  abstract stopPodSandbox(id: string): Promise<void>;

  protected sandbox(id: string): S {
    const s = this.sandboxes.get(id);
    if (!s) throw new Error(`sandbox ${id} not found`);
    return s;
  }

  protected container(id: string): C {
    const c = this.containers.get(id);
    if (!c) throw new Error(`container ${id} not found`);
    return c;
  }

  /** The containers of a sandbox. */
  protected of(sandboxId: string): C[] {
    return [...this.containers.values()].filter((c) => c.sandboxId === sandboxId);
  }

  /** Stops the sandbox, then forgets it and its containers. */
  async removePodSandbox(sandboxId: string): Promise<void> {
    await this.stopPodSandbox(sandboxId);
    for (const [id, c] of this.containers) if (c.sandboxId === sandboxId) this.containers.delete(id);
    this.sandboxes.delete(sandboxId);
  }

  podSandboxStatus(id: string): PodSandboxStatus | undefined {
    return this.sandboxes.get(id)?.status;
  }

  listPodSandbox(): PodSandboxStatus[] {
    return [...this.sandboxes.values()].map((s) => s.status);
  }

  containerStatus(id: string): ContainerStatus | undefined {
    return this.containers.get(id)?.status;
  }

  listContainers(filter: { podSandboxId?: string } = {}): ContainerStatus[] {
    return (filter.podSandboxId ? this.of(filter.podSandboxId) : [...this.containers.values()]).map((c) => c.status);
  }
}
