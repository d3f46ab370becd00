/**
 * One pod on this node, as the kubelet's pod worker drives it: syncs run one at a time (kicked by
 * pod updates, container exits, probe results and timers); the first sets up the pod's volumes and,
 * beside them, the pod's sandbox (IP) on each runtime its containers' images go to (a container's
 * start waits for its own), then init containers run in order to completion, then every container is kept running
 * per restartPolicy. A pod being deleted is stopped (preStop, SIGTERM, grace period, SIGKILL), its
 * final status written, and the pod deleted for good (grace 0, uid precondition), as the kubelet's
 * status manager does. Status writes follow every change.
 */
import { type KubeClient, Resources } from '@func/kube-client';
import { deletedForGood } from './delete.js';
import type { RuntimeService } from '../runtime/cri.js';
import { chooseHandler } from '../runtime/handlers.js';
import { ContainerRunner } from './container.js';
import type { PodContext } from './pod-context.js';
import { podStatus } from './pod-status.js';
import { openSandbox, removePodDir, type Sandbox } from '../sandbox/sandbox.js';
import type { StatusWriter } from '../status-sync.js';
import type { Terminated } from './termination.js';
import { rfc3339, type Pod } from '../types.js';

export interface WorkerDeps {
  kube: KubeClient;
  /** The pod's context, built by the agent around the live pod. */
  context(pod: () => Pod, worker: PodHooks, sandbox: () => Sandbox | undefined): PodContext;
  status: StatusWriter;
  /** Called once the pod is gone from this node (deleted, or removed from the API). */
  finished(): void;
  /** Take the pod's sandboxes and containers the runtimes kept from an earlier run of the agent (only the pods the agent finds as it starts). */
  adopt?: boolean;
  log(entry: Record<string, unknown>): void;
}

/** What the pod's context calls back into its worker for. */
export interface PodHooks {
  kick(ms: number): void;
  changed(): void;
  sandbox(runtime: RuntimeService): Promise<string>;
  portForward(runtime: RuntimeService, port: number): { host: string; port: number } | undefined;
  target(port: number): { host: string; port: number };
}

const isTerminalPhase = (pod: Pod) => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

export class PodWorker {
  private readonly ctx: PodContext;
  private readonly init: ContainerRunner[];
  private readonly main: ContainerRunner[];
  /** Ephemeral containers, as the spec adds them (pods/ephemeralcontainers); each runs once. */
  private readonly ephemeral: ContainerRunner[] = [];
  /** Ephemeral containers whose simulation was announced with an event. */
  private readonly simulatedNoted = new Set<string>();
  private volumes?: Sandbox;
  /** The pod's sandbox on each runtime that runs one of its containers. */
  private readonly sandboxes = new Map<RuntimeService, Promise<string>>();
  /** Sandbox ids known so far (a sandbox still starting has none yet). */
  private readonly sandboxIds = new Map<RuntimeService, string>();
  /** The pod's sandbox is one an earlier run of the agent left (its IP is the pod's), and its volumes are not set up again yet. */
  private adopted = false;
  private startTime?: string;
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private running?: Promise<void>;
  private again = false;
  /** Torn down: no container will start again. */
  private ending?: Promise<void>;
  /** Every container ended for good (Succeeded / Failed). */
  private completed = false;
  private done = false;
  /** The agent is stopping: nothing more is written to the API. */
  private silent = false;

  constructor(private pod: Pod, private readonly deps: WorkerDeps) {
    this.ctx = deps.context(() => this.pod, this, () => this.volumes);
    this.init = (pod.spec.initContainers ?? []).map((c) => new ContainerRunner(c, true, this.ctx));
    this.main = pod.spec.containers.map((c) => new ContainerRunner(c, false, this.ctx));
    this.startTime = pod.status?.startTime;
    this.addEphemeral();
    if (deps.adopt) this.adopt();
  }

  /**
   * The pod's sandboxes and containers an earlier run of the agent left running (the runtime keeps
   * them across restarts) become this worker's, as the kubelet's first sync finds a pod's containers
   * in the runtime; a sandbox no longer ready goes, and the pod gets a new one.
   */
  private adopt(): void {
    for (const runtime of new Set(this.ctx.handlers.map((h) => h.runtime))) {
      for (const s of runtime.listPodSandbox().filter((s) => s.metadata.uid === this.uid)) {
        if (s.state !== 'SANDBOX_READY' || this.sandboxIds.has(runtime)) {
          void runtime.removePodSandbox(s.id).catch((err: Error) => this.deps.log({ level: 'warn', msg: 'sandbox not removed', uid: this.uid, error: err.message }));
          continue;
        }
        this.sandboxIds.set(runtime, s.id);
        this.sandboxes.set(runtime, Promise.resolve(s.id));
        this.ctx.place.podIP ||= s.network.ip;
        this.adopted = true;
        const containers = runtime.listContainers({ podSandboxId: s.id });
        for (const r of this.all) r.adopt(runtime, containers.filter((c) => c.metadata.name === r.spec.name));
      }
    }
  }

  /** Runners for ephemeral containers the spec added since (they are never removed). */
  private addEphemeral(): void {
    for (const c of this.pod.spec.ephemeralContainers ?? [])
      if (!this.ephemeral.some((r) => r.spec.name === c.name)) this.ephemeral.push(new ContainerRunner(c, false, this.ctx));
  }

  private get all(): ContainerRunner[] {
    return [...this.main, ...this.init, ...this.ephemeral];
  }

  get uid(): string {
    return this.pod.metadata.uid ?? '';
  }

  get current(): Pod {
    return this.pod;
  }

  container(name: string): ContainerRunner | undefined {
    return this.all.find((r) => r.spec.name === name);
  }

  update(pod: Pod): void {
    this.pod = pod;
    this.addEphemeral();
    this.kick(0);
  }

  kick(ms: number): void {
    const at = Date.now() + ms;
    if (this.done || (this.timer && this.timerAt <= at)) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => ((this.timer = undefined), (this.timerAt = Infinity), this.run()), ms);
    this.timer.unref();
  }

  changed(): void {
    if (!this.done && !this.silent) void this.deps.status.write(this.status(false));
  }

  /** The pod's sandbox on `runtime`, run once (again after a failure); the first sandbox's IP is the pod's. */
  sandbox(runtime: RuntimeService): Promise<string> {
    let id = this.sandboxes.get(runtime);
    // None is made for a pod being stopped: its sandboxes are removed (or being removed) already.
    if (!id && (this.done || this.ending)) return Promise.reject(new Error('the pod is stopping'));
    if (!id) {
      const { name = '', namespace = '', uid = '', labels = {}, annotations = {} } = this.pod.metadata;
      id = runtime.runPodSandbox({
        metadata: { name, namespace, uid, attempt: 0 }, hostname: name, logDirectory: this.ctx.logDir, podDir: this.ctx.podDir, labels, annotations, pod: this.pod,
      }).then((sandboxId) => {
        this.ctx.place.podIP ||= runtime.podSandboxStatus(sandboxId)?.network.ip ?? '';
        this.sandboxIds.set(runtime, sandboxId);
        return sandboxId;
      });
      this.sandboxes.set(runtime, id);
      id.catch(() => this.sandboxes.delete(runtime));
    }
    return id;
  }

  portForward(runtime: RuntimeService, port: number): { host: string; port: number } | undefined {
    const id = this.sandboxIds.get(runtime);
    return id ? runtime.portForward(id, port) : undefined;
  }

  /** Where a port of the pod is reached from the node: through the runtime of a container that has one. */
  target(port: number): { host: string; port: number } {
    for (const r of [...this.main, ...this.init]) {
      const found = r.target(port);
      if (found) return found;
    }
    return { host: this.ctx.place.podIP, port };
  }

  private run(): void {
    if (this.running) return void (this.again = true);
    this.running = this.sync()
      .catch((err: Error) => this.ctx.event('Warning', 'FailedSync', `error determining status: ${err.message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again) (this.again = false), this.run();
      });
  }

  private status(terminal: boolean) {
    const kwok = this.main.every((r) => r.kwok) && this.init.every((r) => r.kwok || r.exited?.exitCode === 0);
    return podStatus({
      pod: this.pod,
      init: this.init.map((r) => r.status()),
      main: this.main.map((r) => r.status()),
      ephemeral: this.ephemeral.map((r) => r.status()),
      sandboxReady: this.volumes !== undefined || this.adopted,
      podIP: this.volumes || this.adopted ? this.ctx.place.podIP : '',
      hostIP: this.ctx.place.hostIP,
      startTime: (this.startTime ??= rfc3339()),
      terminal,
      kwok,
    });
  }

  private async sync(): Promise<void> {
    if (this.done || this.ending) return;
    if (this.pod.metadata.deletionTimestamp) return this.terminate();
    if (this.completed || (isTerminalPhase(this.pod) && !this.volumes)) return;
    if (!this.volumes && !(await this.openSandbox())) return;
    const policy = this.pod.spec.restartPolicy ?? 'Always';
    for (const r of this.init) {
      const exit = r.exited;
      if (exit?.exitCode === 0) continue;
      if (exit && policy === 'Never') return this.finish();
      await r.ensure((e) => policy !== 'Never' && e.exitCode !== 0);
      return this.changed();
    }
    const restart = (e: Terminated) => policy === 'Always' || (policy === 'OnFailure' && e.exitCode !== 0);
    for (const r of this.main) await r.ensure(restart);
    for (const r of this.ephemeral) {
      await r.ensure(() => false);
      if (r.kwok && !this.simulatedNoted.has(r.spec.name)) {
        this.simulatedNoted.add(r.spec.name);
        this.ctx.event('Warning', 'Simulated', `Ephemeral container ${r.spec.name} is simulated: image "${r.spec.image ?? ''}" is not one this node runs, so nothing runs in it and exec and attach are not available`, `spec.ephemeralContainers{${r.spec.name}}`);
      }
    }
    this.changed();
    if (this.main.every((r) => r.exited && !restart(r.exited))) await this.finish();
  }

  /**
   * The runtime each container will run on, as far as the images the node has tell (undefined: not
   * known before a pull); every one reported kwok's way means a kwok pod (no volumes, tokens or directories).
   */
  private async runtimes(): Promise<(RuntimeService | undefined)[]> {
    const all = [...(this.pod.spec.initContainers ?? []), ...this.pod.spec.containers];
    return Promise.all(all.map(async (c) => {
      const spec = { image: c.image ?? '' };
      const image = await this.ctx.images.imageStatus(spec);
      if (!image && this.ctx.images.pullable(spec)) return undefined;
      const chosen = chooseHandler(this.ctx.handlers, spec.image, image);
      return 'refused' in chosen ? undefined : chosen.runtime;
    }).map((p) => p.catch(() => undefined)));
  }

  private async openSandbox(): Promise<boolean> {
    const runtimes = await this.runtimes();
    if (runtimes.every((r) => r?.reporting === 'kwok')) {
      this.volumes = { volumes: new Map(), mounts: () => [], close: () => undefined };
      return true;
    }
    // A pod whose containers run already is not reported as starting while its volumes are set up again.
    if (!this.adopted) this.changed();
    // The pod's sandboxes (its network) are made while its volumes are: a container start then finds
    // them ready (an adopted one is there already). One that fails is made again by the container's
    // start, which reports it.
    for (const r of new Set(runtimes)) if (r && r.reporting !== 'kwok') this.sandbox(r).catch(() => undefined);
    const opened = await openSandbox(() => this.pod, this.ctx.podDir, this.ctx.sources, this.ctx.place);
    if (!opened.ok) {
      this.ctx.event('Warning', 'FailedMount', opened.message);
      this.kick(this.ctx.retryMs);
      return false;
    }
    this.volumes = opened.sandbox;
    this.adopted = false;
    return true;
  }

  /** Every container has ended for good (restartPolicy): the pod is Succeeded or Failed; the sandbox goes. */
  private async finish(): Promise<void> {
    this.completed = true;
    await Promise.all(this.all.map((r) => r.stop(0)));
    this.volumes?.close();
    this.volumes = undefined;
    await this.stopSandboxes();
    await this.deps.status.write(this.status(true));
  }

  /** The pod is being deleted: stop everything within the grace period, report, then delete it for good. */
  private terminate(): Promise<void> {
    return (this.ending ??= (async () => {
      const grace = this.pod.metadata.deletionGracePeriodSeconds ?? this.pod.spec.terminationGracePeriodSeconds ?? 30;
      // kwok deletes a simulated pod at once; a real one reports its final status first, as the kubelet does.
      const kwokOnly = [...this.main, ...this.init].every((r) => r.kwok);
      if (kwokOnly) this.silent = true;
      await Promise.all(this.all.map((r) => r.stop(grace)));
      await this.stopSandboxes();
      if (!kwokOnly) await this.deps.status.write(this.status(true));
      await this.deps.status.flushed();
      await deletedForGood(this.deps.kube, this.pod);
      this.release(true);
    })().catch((err: unknown) => {
      // Logged and tried again at the next sync, as the kubelet's status manager retries its delete;
      // nothing waits on this promise to fail (a pod removed meanwhile is cleaned up by remove()).
      const { name = '', namespace } = this.pod.metadata;
      this.deps.log({ level: 'warn', msg: 'pod not deleted', pod: `${namespace}/${name}`, error: (err as Error).message });
      this.ending = undefined;
      this.kick(1000);
    }));
  }

  /** Every sandbox of the pod stopped (its containers are): its network goes. One still being made is waited for, then stopped. */
  private async stopSandboxes(): Promise<void> {
    await Promise.all([...this.sandboxes].map(async ([runtime, made]) => {
      const id = await made.catch(() => undefined);
      if (id) await runtime.stopPodSandbox(id);
    }));
  }

  /**
   * Every sandbox of the pod removed, with its containers, one still being made once it is (else its
   * network would be left behind); errors are logged, never thrown (nothing waits on them).
   */
  private async removeSandboxes(): Promise<void> {
    const all = [...this.sandboxes];
    this.sandboxIds.clear();
    this.sandboxes.clear();
    await Promise.all(all.map(async ([runtime, made]) => {
      const id = await made.catch(() => undefined);
      if (id) await runtime.removePodSandbox(id).catch((err: Error) => this.ctx.event('Warning', 'FailedKillPod', `error killing pod: ${err.message}`));
    }));
  }

  /** The pod left the API (deleted at once, or bound elsewhere): stop at once and clean up. */
  async remove(): Promise<void> {
    if (this.done) return;
    await this.terminateNoReport(true);
  }

  /** Stops every container at once and releases the pod; a termination in flight is waited for (and, had it failed, done again here). */
  private async terminateNoReport(removeFiles: boolean): Promise<void> {
    while (!this.done) {
      await (this.ending ??= Promise.all(this.all.map((r) => r.stop(0))).then(() => this.removeSandboxes()).then(() => this.release(removeFiles)));
    }
  }

  private release(removeFiles: boolean): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.volumes?.close();
    void this.removeSandboxes();
    if (removeFiles) {
      removePodDir(this.ctx.podDir);
      removePodDir(this.ctx.logDir);
    }
    this.deps.finished();
  }

  /** The agent stops: containers are stopped without a report; their files stay for the next start. */
  async shutdown(): Promise<void> {
    this.silent = true;
    await this.terminateNoReport(false);
  }
}
