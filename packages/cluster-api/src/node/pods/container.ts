/**
 * One container of a pod across its instances: starts them (container-start.ts), restarts them per
 * the pod's restartPolicy with the kubelet's CrashLoopBackOff, runs their probes, stops them
 * gracefully, and reports the ContainerStatus the kubelet would (state, lastState, restartCount,
 * ready, started, image, imageID, containerID).
 */
import { crashLoopMessage, startContainer, type Started } from './container-start.js';
import type { LiveLog } from '../logs/logs.js';
import type { ContainerStatus as RuntimeStatus, RuntimeService } from '../runtime/cri.js';
import { fieldPath, type PodContext } from './pod-context.js';
import { check, execIn, untilListening } from '../probes/probe-check.js';
import { ProbeWorker, type ProbeKind, type ProbeResult } from '../probes/probes.js';
import { stopContainer, terminated, type Terminated } from './termination.js';
import { podDesc, rfc3339, type Container, type ContainerState, type ContainerStatus } from '../types.js';

type Phase = 'idle' | 'starting' | 'running' | 'exited' | 'waiting';

/** The running (or last) instance: the runtime's container. */
interface Instance {
  runtime: RuntimeService;
  id: string;
  /** `<runtime>://<id>`, as containerStatuses show it. */
  containerID: string;
  startedAt: number;
  logPath: string;
  /** Reported kwok's way (its runtime's `reporting`). */
  kwok: boolean;
}

export class ContainerRunner {
  private phase: Phase = 'idle';
  private waiting: { reason: string; message?: string } = { reason: 'ContainerCreating' };
  private inst?: Instance;
  private last?: Terminated;
  private prior?: Terminated;
  private imageID = '';
  private probes: ProbeWorker[] = [];
  private retry?: NodeJS.Timeout;
  private starting?: Promise<void>;
  private stopping?: Promise<void>;
  restartCount = 0;

  constructor(readonly spec: Container, readonly init: boolean, private readonly ctx: PodContext) {}

  /** Its runtime reports it kwok's way (no events, kwok's status fields). */
  get kwok(): boolean {
    return (this.phase === 'running' || this.phase === 'exited') && !!this.inst?.kwok;
  }

  get running(): boolean {
    return this.phase === 'running';
  }

  /** The running instance's runtime and container id (exec, attach), while one runs. */
  get live(): { runtime: RuntimeService; id: string } | undefined {
    return this.phase === 'running' && this.inst ? { runtime: this.inst.runtime, id: this.inst.id } : undefined;
  }

  /** Where the pod's port is reached from the node, through this container's runtime. */
  target(port: number): { host: string; port: number } | undefined {
    return this.inst ? this.ctx.portForward(this.inst.runtime, port) : undefined;
  }

  /** Ended and not to be restarted by itself (the pod decides). */
  get exited(): Terminated | undefined {
    return this.phase === 'exited' ? this.last : undefined;
  }

  /**
   * Where `kubectl logs` reads, chosen as the kubelet's validateContainerLogStatus chooses: the
   * running or last ended instance, or with `previous` the one before (its lastState); otherwise
   * the kubelet's message for why there is nothing to read.
   */
  logSource(previous: boolean): { file: string; live?: LiveLog } | { error: string } {
    const file = (n: number) => `${this.ctx.logDir}/${this.spec.name}/${n}.log`;
    const where = `container "${this.spec.name}" in pod "${this.ctx.pod().metadata.name ?? ''}"`;
    const n = this.restartCount;
    if (previous) {
      if (this.phase === 'running' || this.phase === 'exited') return (this.phase === 'running' ? this.last : this.prior) ? { file: file(n - 1) } : { error: `previous terminated ${where} not found` };
      return this.last ? { file: file(n) } : { error: `previous terminated ${where} not found` };
    }
    if (this.phase === 'running' && this.inst?.kwok) return { file: file(-1) };
    if (this.phase === 'running') return { file: file(n), live: this.inst!.runtime.containerLog?.(this.inst!.id) };
    if (this.last) return { file: file(n) };
    const reason = this.waiting.reason;
    if (reason === 'ErrImagePull') return { error: `${where} is waiting to start: image can't be pulled` };
    if (reason === 'ImagePullBackOff') return { error: `${where} is waiting to start: trying and failing to pull image` };
    return { error: `${where} is waiting to start: ${reason}` };
  }

  private get key(): string {
    return `${this.ctx.pod().metadata.uid}/${this.spec.name}`;
  }

  /** Brings the container towards running: start it, or restart it when `restart` allows, after its back-off. */
  async ensure(restart: (exit: Terminated) => boolean): Promise<void> {
    if (this.phase === 'starting' || this.running || this.stopping) return;
    if (this.phase === 'waiting' && this.retry) return;
    if (this.last && (this.phase === 'exited' || this.waiting.reason === 'CrashLoopBackOff')) {
      if (!restart(this.last)) return;
      const finishedAt = Date.parse(this.last.finishedAt!);
      if (this.ctx.backoff.inBackoffSince(this.key, finishedAt)) return this.backOff(finishedAt);
      this.ctx.backoff.next(this.key, finishedAt);
    }
    await (this.starting = this.start().finally(() => (this.starting = undefined)));
  }

  private backOff(finishedAt: number): void {
    const message = crashLoopMessage(this.ctx.backoff.delay(this.key), this.spec, podDesc(this.ctx.pod()));
    if (this.waiting.reason !== 'CrashLoopBackOff' || this.phase !== 'waiting') {
      this.ctx.event('Warning', 'BackOff', `Back-off restarting failed container ${this.spec.name} in pod ${podDesc(this.ctx.pod())}`, fieldPath(this.spec, this.init));
    }
    this.setWaiting({ reason: 'CrashLoopBackOff', message }, this.ctx.backoff.readyAt(this.key, finishedAt));
  }

  private setWaiting(waiting: { reason: string; message?: string }, retryAt: number): void {
    this.phase = 'waiting';
    this.waiting = waiting;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => ((this.retry = undefined), this.ctx.kick(0)), Math.max(0, retryAt - Date.now()));
    this.retry.unref();
    this.ctx.changed();
  }

  private async start(): Promise<void> {
    this.phase = 'starting';
    const instance = this.last ? this.restartCount + 1 : this.restartCount;
    let started: Started;
    try {
      started = await startContainer(this.ctx, this.spec, this.init, instance);
    } catch (err) {
      started = { kind: 'waiting', reason: 'CreateContainerError', message: (err as Error).message, retryAt: Date.now() + this.ctx.retryMs };
    }
    if (started.kind === 'waiting') return this.setWaiting({ reason: started.reason, message: started.message }, started.retryAt);
    this.restartCount = instance;
    this.imageID = started.imageID;
    this.watch(started.runtime, started.id, started.startedAt, started.logPath);
    this.ctx.changed();
  }

  /** `id` is the running instance: probes start, and its exit is awaited. */
  private watch(runtime: RuntimeService, id: string, startedAt: number, logPath: string): void {
    this.phase = 'running';
    const kwok = runtime.reporting === 'kwok';
    this.inst = { runtime, id, containerID: `${runtime.version().runtimeName}://${id}`, startedAt, logPath, kwok };
    if (!kwok) this.startProbes(startedAt);
    runtime.waitContainer(id).then((exit) => this.onExit(id, exit), (err: Error) => this.ctx.event('Warning', 'Failed', `Error: ${err.message}`, fieldPath(this.spec, this.init)));
  }

  /**
   * The instances an earlier run of the agent started, as the runtime still has them (the pod's
   * sandbox outlived the agent): the latest is the current one, running or exited (restarted then
   * per restartPolicy), its attempt the restartCount; the one before is its lastState.
   */
  adopt(runtime: RuntimeService, found: RuntimeStatus[]): void {
    const ran = found.filter((s) => s.state === 'CONTAINER_RUNNING' || s.state === 'CONTAINER_EXITED').sort((a, b) => a.metadata.attempt - b.metadata.attempt);
    const latest = ran.at(-1);
    if (!latest || this.phase !== 'idle') return;
    const instance = (s: RuntimeStatus) => ({ containerID: `${runtime.version().runtimeName}://${s.id}`, startedAt: s.startedAt ?? s.createdAt, kwok: runtime.reporting === 'kwok' });
    const before = ran.at(-2);
    if (before?.state === 'CONTAINER_EXITED') this.last = terminated(before, instance(before), this.spec);
    this.restartCount = latest.metadata.attempt;
    this.imageID = latest.imageRef;
    this.watch(runtime, latest.id, latest.startedAt ?? latest.createdAt, latest.logPath);
    if (latest.state === 'CONTAINER_EXITED') this.onExit(latest.id, latest);
  }

  private onExit(id: string, exit: RuntimeStatus): void {
    if (this.inst?.id !== id || this.phase !== 'running') return;
    this.stopProbes();
    this.prior = this.last;
    this.last = terminated(exit, this.inst, this.spec);
    this.phase = 'exited';
    this.ctx.changed();
    this.ctx.kick(0);
  }

  private startProbes(startedAt: number): void {
    const c = this.spec;
    const hooks = {
      check: (probe: Parameters<typeof check>[0], timeoutMs: number) => check(probe, c, this.ctx.target, timeoutMs, this.inst && execIn(this.inst.runtime, this.inst.id)),
      listening: (probe: Parameters<typeof check>[0], withinMs: number) => untilListening(probe, c, this.ctx.target, withinMs),
      failed: (kind: ProbeKind, output: string) => this.ctx.event('Warning', 'Unhealthy', `${kind} probe failed: ${output}`, fieldPath(c, this.init)),
      changed: (kind: ProbeKind, result: ProbeResult) => this.probeChanged(kind, result),
    };
    const startup = c.startupProbe ? new ProbeWorker('Startup', c.startupProbe, hooks, startedAt, () => true) : undefined;
    const afterStartup = () => !startup || startup.result === 'success';
    this.probes = [
      ...(startup ? [startup] : []),
      ...(c.livenessProbe ? [new ProbeWorker('Liveness', c.livenessProbe, hooks, startedAt, afterStartup)] : []),
      ...(c.readinessProbe ? [new ProbeWorker('Readiness', c.readinessProbe, hooks, startedAt, afterStartup)] : []),
    ];
    for (const p of this.probes) p.start();
  }

  private probeChanged(kind: ProbeKind, result: ProbeResult): void {
    if (kind === 'Startup' && result === 'success') for (const p of this.probes) if (p.kind !== 'Startup') p.trigger();
    if (kind !== 'Readiness' && result === 'failure') {
      const probe = kind === 'Liveness' ? this.spec.livenessProbe : this.spec.startupProbe;
      const grace = probe?.terminationGracePeriodSeconds ?? this.ctx.pod().spec.terminationGracePeriodSeconds ?? 30;
      this.stop(grace, `Container ${this.spec.name} failed ${kind.toLowerCase()} probe, will be restarted`)
        .catch((err: Error) => this.ctx.event('Warning', 'FailedKillContainer', `error killing container ${this.spec.name}: ${err.message}`, fieldPath(this.spec, this.init)));
    }
    this.ctx.changed();
  }

  private stopProbes(): void {
    for (const p of this.probes) p.stop();
    this.probes = [];
  }

  private probe(kind: ProbeKind): ProbeResult | undefined {
    return this.probes.find((p) => p.kind === kind)?.result;
  }

  /**
   * Stops the running instance (preStop, SIGTERM, SIGKILL after the grace period: termination.ts);
   * resolves once it has exited. Whether it starts again is the caller's business (ensure).
   */
  async stop(graceSeconds: number, message?: string): Promise<void> {
    clearTimeout(this.retry);
    this.retry = undefined;
    await this.starting;
    if (this.phase !== 'running' || !this.inst) return this.stopping;
    const inst = this.inst;
    this.stopping ??= (inst.kwok ? inst.runtime.stopContainer(inst.id, 0) : stopContainer(inst.runtime, inst.id, this.spec, this.ctx, graceSeconds, this.init, message))
      .then(() => {
        const exit = inst.runtime.containerStatus(inst.id);
        if (exit) this.onExit(inst.id, exit);
      })
      .finally(() => (this.stopping = undefined));
    return this.stopping;
  }

  status(): ContainerStatus {
    const base = { name: this.spec.name, image: this.spec.image ?? '' };
    // kwok's pod-ready stage writes these fields, and imageID, which the Python client requires.
    if (this.phase === 'running' && this.inst?.kwok) return { ...base, imageID: '', ready: true, restartCount: this.restartCount, state: { running: { startedAt: rfc3339(this.inst.startedAt) } } } as ContainerStatus;
    const state: ContainerState =
      this.phase === 'running' ? { running: { startedAt: rfc3339(this.inst!.startedAt) } }
        : this.phase === 'exited' && this.last ? { terminated: this.last }
          : { waiting: this.waiting };
    const previous = this.phase === 'exited' ? this.prior : this.last;
    const started = this.phase === 'running' && (this.probe('Startup') ?? 'success') === 'success';
    const ready = started && (this.probe('Readiness') ?? 'success') === 'success';
    return {
      ...base,
      state,
      lastState: previous ? { terminated: previous } : {},
      ready,
      restartCount: this.restartCount,
      imageID: this.imageID,
      ...(this.phase === 'running' ? { containerID: this.inst!.containerID } : this.phase === 'exited' && this.last?.containerID ? { containerID: this.last.containerID } : {}),
      started,
      ...this.mountStatus(),
    };
  }

  /** The kubelet's volumeMounts status of a container that ran (absent when it mounts nothing). */
  private mountStatus(): Pick<ContainerStatus, 'volumeMounts'> {
    const mounts = this.inst && !this.inst.kwok ? this.ctx.mounts(this.spec) : [];
    if (mounts.length === 0) return {};
    return { volumeMounts: mounts.map((m) => ({ name: m.name, mountPath: m.mountPath, ...(m.readOnly ? { readOnly: true } : {}), recursiveReadOnly: 'Disabled' })) };
  }
}
