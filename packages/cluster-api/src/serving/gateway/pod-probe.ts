/**
 * The activator's own readiness probes (Knative's revision backends manager, which probes pods
 * itself): while a request is held for a revision, each of its pods the Endpoints list as not yet
 * ready is probed by the gateway, with the revision's readiness probe, at the address requests
 * would go to — every `intervalMs` (10 ms) for the first `fastForMs` (5 s), then every second —
 * and joins the revision's pods at its first success, without waiting for the kubelet's probe,
 * the status write and the Endpoints update that follow. A pod the Endpoints list as ready is
 * theirs again (a later readiness failure there takes it out); one that leaves them is forgotten.
 * Only a probe the gateway can run as the kubelet would is run here (httpGet or tcpSocket on the
 * port requests go to, on the pod's own address); for any other the Endpoints decide alone.
 * A container with a startup probe is, as the kubelet has it, not probed for readiness until its
 * startup probe has succeeded once: the gateway runs that first (its port, when it names none, the
 * user container's), and a pod whose startup probe it cannot run is left to the Endpoints, which
 * list it ready only once the kubelet saw it start.
 */
import { check, type ProbeOutcome } from '../../node/probes/probe-check.js';
import type { Container, Probe } from '../../node/types.js';
import { withPort } from '../../controllers/serving-revision/revision.js';

export interface PodAddress {
  ip: string;
  port: number;
}

/** A revision's readiness probe as its user container has it (port filled), with that container's port. */
export interface RevisionProbe {
  probe: Probe;
  container: Container;
  /** The port requests go to (the Endpoints' port stands for it). */
  port: number;
}

export type ProbeCheck = (probe: Probe, container: Container, to: PodAddress, timeoutMs: number) => Promise<ProbeOutcome>;

/** Runs a probe against one pod address, as the kubelet's prober would against the pod. */
export const probeAt: ProbeCheck = (probe, container, to, timeoutMs) => check(probe, container, () => ({ host: to.ip, port: to.port }), timeoutMs);

/** The container's startup probe, with the user container's port when it names none (as its pods get it). */
export const startupProbe = (r: RevisionProbe): Probe | undefined =>
  r.container.startupProbe && (withPort(r.container.startupProbe, r.port) as Probe);

/** Whether the gateway can run `probe` against the pod as the kubelet would (see above). */
function runnable(probe: Probe, r: RevisionProbe): boolean {
  const action = probe.httpGet ?? probe.tcpSocket;
  if (!action || probe.exec || probe.grpc || action.host) return false;
  const port = action.port;
  return port === r.port || (typeof port === 'string' && (r.container.ports ?? []).some((p) => p.name === port && p.containerPort === r.port));
}

/** Whether the gateway can probe the pod itself: its readiness probe, and its startup probe if it has one (see above). */
export function directlyProbed(r: RevisionProbe): boolean {
  const startup = startupProbe(r);
  return runnable(r.probe, r) && (!startup || runnable(startup, r));
}

interface Probing {
  timer?: NodeJS.Timeout;
  since: number;
  /** Whether its startup probe has succeeded (or it has none): readiness is probed only then. */
  startedUp: boolean;
  /** Readiness successes in a row (the probe's successThreshold makes it healthy). */
  successes: number;
  healthy: boolean;
}

export interface PodProberOptions {
  /** A pod of revision `key` answered its probe. */
  healthy(key: string): void;
  check?: ProbeCheck;
  intervalMs?: number;
  fastForMs?: number;
  slowIntervalMs?: number;
}

const id = (a: PodAddress): string => `${a.ip}:${a.port}`;

export class PodProber {
  private readonly revisions = new Map<string, Map<string, Probing>>();
  private stopped = false;

  constructor(private readonly opts: PodProberOptions) {}

  /**
   * A revision's pods the Endpoints list as not ready now; `probe` undefined when there is none;
   * `wanted` whether requests wait for the revision (new probing starts only then). Returns those
   * that answered their probe.
   */
  update(key: string, notReady: readonly PodAddress[], probe: RevisionProbe | undefined, wanted: boolean): PodAddress[] {
    const known = this.revisions.get(key) ?? new Map<string, Probing>();
    const listed = new Set(notReady.map(id));
    // Ready or gone: the Endpoints decide from now on.
    for (const [k, p] of known) if (!listed.has(k)) (clearTimeout(p.timer), known.delete(k));
    if (probe && directlyProbed(probe) && !this.stopped) {
      for (const a of notReady) {
        if (known.has(id(a)) || !wanted) continue;
        const p: Probing = { since: Date.now(), startedUp: !startupProbe(probe), successes: 0, healthy: false };
        known.set(id(a), p);
        this.tick(key, a, p, probe);
      }
    }
    if (known.size === 0) this.revisions.delete(key);
    else this.revisions.set(key, known);
    return notReady.filter((a) => known.get(id(a))?.healthy);
  }

  private tick(key: string, a: PodAddress, p: Probing, r: RevisionProbe): void {
    // Until it has started, its startup probe (whose successThreshold is 1), then its readiness probe.
    const probe = p.startedUp ? r.probe : startupProbe(r)!;
    const timeoutMs = Math.max(1, probe.timeoutSeconds ?? 1) * 1000;
    void (this.opts.check ?? probeAt)(probe, r.container, a, timeoutMs).then((outcome) => {
      if (this.revisions.get(key)?.get(id(a)) !== p || this.stopped) return;
      if (!p.startedUp && outcome.ok) {
        p.startedUp = true;
        return this.tick(key, a, p, r);
      }
      if (p.startedUp) p.successes = outcome.ok ? p.successes + 1 : 0;
      if (p.successes >= Math.max(1, r.probe.successThreshold ?? 1)) {
        p.healthy = true;
        return this.opts.healthy(key);
      }
      const fast = Date.now() - p.since < (this.opts.fastForMs ?? 5000);
      p.timer = setTimeout(() => this.tick(key, a, p, r), fast ? (this.opts.intervalMs ?? 10) : (this.opts.slowIntervalMs ?? 1000));
      p.timer.unref();
    });
  }

  /** Forgets a revision (its Endpoints deleted). */
  forget(key: string): void {
    for (const p of this.revisions.get(key)?.values() ?? []) clearTimeout(p.timer);
    this.revisions.delete(key);
  }

  stop(): void {
    this.stopped = true;
    for (const key of [...this.revisions.keys()]) this.forget(key);
  }
}
