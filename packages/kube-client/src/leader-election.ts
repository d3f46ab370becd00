/**
 * Leader election over a `coordination.k8s.io/v1` Lease, as client-go's leaderelection: a
 * candidate takes the lease when it is free or its holder has not renewed it for
 * leaseDurationSeconds (measured on this machine's clock from when this candidate last saw the
 * record change, so clock skew between machines does not matter), renews it every retryPeriod,
 * and stops leading when it cannot renew within renewDeadline. Writes carry the resourceVersion
 * read, so two candidates never both win a round (409 Conflict for the loser).
 */
import type { KubeClient } from './client.js';
import { isConflict, isNotFound } from './errors.js';
import { Resources } from './resources.js';
import type { KubeObject } from './types.js';

/** What the elector calls: a KubeClient, or any client answering these three the same way (KubeApiErrors). */
export type LeaseClient = Pick<KubeClient, 'get' | 'create' | 'update'>;

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewDeadlineSeconds?: number;
  retryPeriodSeconds?: number;
  /** Give the lease up when stopped, so another candidate need not wait for it to expire. */
  releaseOnStop?: boolean;
  onStartedLeading?: () => void;
  onStoppedLeading?: () => void;
  onNewLeader?: (identity: string) => void;
  onError?: (err: unknown) => void;
}

/** Kubernetes' MicroTime: RFC 3339 with microseconds. */
const microTime = (d = new Date()) => d.toISOString().replace('Z', '000Z');

export class LeaderElector {
  private observed?: { record: string; at: number };
  private leader = false;
  private lastRenew = 0;
  private knownLeader?: string;
  private readonly abort = new AbortController();
  private running?: Promise<void>;

  constructor(private readonly client: LeaseClient, private readonly options: LeaderElectionOptions) {
    const duration = options.leaseDurationSeconds ?? 15;
    const deadline = options.renewDeadlineSeconds ?? 10;
    const retry = options.retryPeriodSeconds ?? 2;
    if (!(duration > deadline && deadline > retry && retry > 0)) throw new Error('leader election needs leaseDurationSeconds > renewDeadlineSeconds > retryPeriodSeconds > 0');
    if (!options.identity) throw new Error('leader election needs a non-empty identity');
  }

  isLeader(): boolean {
    return this.leader;
  }

  /** Campaigns until stopped: acquire, then renew; losing the lease calls onStoppedLeading and campaigns again. */
  start(): this {
    this.running ??= this.loop();
    return this;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    if (this.leader && this.options.releaseOnStop) await this.release().catch((err) => this.options.onError?.(err));
    this.setLeader(false);
  }

  private get durationMs() { return (this.options.leaseDurationSeconds ?? 15) * 1000; }

  private async loop(): Promise<void> {
    const retryMs = (this.options.retryPeriodSeconds ?? 2) * 1000;
    const deadlineMs = (this.options.renewDeadlineSeconds ?? 10) * 1000;
    while (!this.abort.signal.aborted) {
      const ok = await this.tryAcquireOrRenew().catch((err) => (this.options.onError?.(err), false));
      if (ok) {
        this.lastRenew = Date.now();
        this.setLeader(true);
      } else if (this.leader && Date.now() - this.lastRenew > deadlineMs) {
        this.setLeader(false);
      }
      await new Promise<void>((r) => {
        // One listener per wait, removed when the wait ends: the signal outlives thousands of rounds.
        const done = () => (clearTimeout(t), this.abort.signal.removeEventListener('abort', done), r());
        const t = setTimeout(done, retryMs * (this.leader ? 1 : 0.8 + Math.random() * 0.4));
        this.abort.signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  private setLeader(value: boolean): void {
    if (value === this.leader) return;
    this.leader = value;
    if (value) this.options.onStartedLeading?.();
    else this.options.onStoppedLeading?.();
  }

  private record(spec: LeaseSpec | undefined): LeaseSpec {
    const me = this.options.identity;
    const now = microTime();
    const transitions = spec?.leaseTransitions ?? 0;
    const taking = spec?.holderIdentity !== me;
    return {
      holderIdentity: me,
      leaseDurationSeconds: Math.ceil(this.options.leaseDurationSeconds ?? 15),
      acquireTime: taking ? now : (spec?.acquireTime ?? now),
      renewTime: now,
      leaseTransitions: taking && spec ? transitions + 1 : transitions,
    };
  }

  /** One round; true when this candidate holds the lease afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.options;
    let lease: Lease;
    try {
      lease = await this.client.get<Lease>(Resources.leases, name, { namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.client.create<Lease>(Resources.leases, { metadata: { name, namespace }, spec: this.record(undefined) }, { namespace });
        this.noteLeader(identity);
        return true;
      } catch (createErr) {
        if (isConflict(createErr)) return false;
        throw createErr;
      }
    }
    const spec = lease.spec ?? {};
    const serialized = JSON.stringify(spec);
    if (this.observed?.record !== serialized) this.observed = { record: serialized, at: Date.now() };
    const holder = spec.holderIdentity ?? '';
    if (holder) this.noteLeader(holder);
    const durationMs = (spec.leaseDurationSeconds ?? 0) * 1000 || this.durationMs;
    if (holder && holder !== identity && this.observed.at + durationMs > Date.now()) return false;
    try {
      await this.client.update<Lease>(Resources.leases, { ...lease, spec: this.record(spec) }, { namespace });
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
    this.noteLeader(identity);
    return true;
  }

  private noteLeader(identity: string): void {
    if (identity === this.knownLeader) return;
    this.knownLeader = identity;
    this.options.onNewLeader?.(identity);
  }

  private async release(): Promise<void> {
    const { namespace, name } = this.options;
    const lease = await this.client.get<Lease>(Resources.leases, name, { namespace });
    if (lease.spec?.holderIdentity !== this.options.identity) return;
    await this.client.update<Lease>(Resources.leases, { ...lease, spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime() } }, { namespace });
  }
}

/** What runs while leading. */
export interface Leading {
  stop(): Promise<void>;
}

/**
 * Runs `lead` only while `client`'s candidate holds the Lease, as a component under client-go's
 * leaderelection.RunOrDie: started when the Lease is won, stopped when it is lost (and started again
 * on winning it back). `onFailed` hears `lead` failing to start or what it runs failing to stop
 * (default: `onError`). stop() ends the campaign (giving the Lease up with releaseOnStop), then stops
 * what runs.
 */
export function runWhileLeading(client: LeaseClient, options: LeaderElectionOptions, lead: () => Leading | Promise<Leading>, onFailed = options.onError): Leading {
  let running: Promise<Leading> | undefined;
  const stopRunning = async () => {
    const was = running;
    running = undefined;
    await (await was)?.stop();
  };
  const elector = new LeaderElector(client, {
    ...options,
    onStartedLeading: () => {
      options.onStartedLeading?.();
      // An async function runs `lead` at once, up to its first await; a throw becomes the rejection.
      running = (async () => lead())();
      running.catch((err: unknown) => onFailed?.(err));
    },
    onStoppedLeading: () => {
      options.onStoppedLeading?.();
      stopRunning().catch((err: unknown) => onFailed?.(err));
    },
  }).start();
  return { stop: async () => (await elector.stop(), await stopRunning()) };
}
