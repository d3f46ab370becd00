/**
 * Registration and heartbeats, as the kubelet does them: the Node is created (or, when it exists,
 * given this agent's labels, addresses and status), a coordination.k8s.io Lease in kube-node-lease
 * named after the node and owned by it is renewed every quarter of its 40 s duration, and the Node's
 * status is recomputed every 10 s and written when it changed or every 5 minutes (the Lease is the
 * heartbeat the node controller watches). A Node deleted under a running agent is registered again.
 */
import { isAlreadyExists, isNotFound, type KubeClient, type KubeObject, Resources } from '@func/kube-client';
import { isDeepStrictEqual } from 'node:util';
import { nodeObject, nodeStatus, type NodeFacts } from './node-object.js';
import type { Node } from './types.js';

export interface HeartbeatOptions {
  leaseDurationSeconds: number;
  /** How often the Lease is renewed (kubelet: a quarter of its duration). */
  renewIntervalMs: number;
  /** How often the Node's status is recomputed (--node-status-update-frequency). */
  statusUpdateMs: number;
  /** How often an unchanged status is written anyway (--node-status-report-frequency). */
  statusReportMs: number;
}

export const DefaultHeartbeat: HeartbeatOptions = { leaseDurationSeconds: 40, renewIntervalMs: 10_000, statusUpdateMs: 10_000, statusReportMs: 300_000 };

/** Heartbeats for a Lease of `seconds`: renewed every quarter of it, as the kubelet renews. */
export const leaseHeartbeat = (seconds: number): Partial<HeartbeatOptions> => ({ leaseDurationSeconds: seconds, renewIntervalMs: seconds * 250 });

const LeaseNamespace = 'kube-node-lease';
const FieldManager = 'kubelet';

/** metav1.MicroTime: RFC 3339 with microseconds. */
const microTime = (ms = Date.now()): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

type NodeStatus = NonNullable<Node['status']>;

/** Whether `next` says something `current` does not: any field it sets, heartbeat times aside. */
function changed(next: NodeStatus, current: NodeStatus): boolean {
  const bare = (c: NodeStatus['conditions']) => c?.map(({ lastHeartbeatTime: _h, ...rest }) => rest);
  return Object.keys(next).some((k) => (k === 'conditions' ? !isDeepStrictEqual(bare(next.conditions), bare(current.conditions)) : !isDeepStrictEqual(next[k], current[k])));
}

export class NodeHeartbeat {
  private node?: Node;
  private lastWritten?: NodeStatus;
  private lastWrittenAt = 0;
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;

  /**
   * `observed`: the Node as the agent last saw it (its informer): a status someone else changed (the
   * node controller's Unknown) is written over at the next update, as the kubelet compares with the
   * Node it fetched, not with what it wrote last.
   */
  constructor(private readonly kube: KubeClient, private readonly facts: NodeFacts, private readonly opts: HeartbeatOptions, private readonly log: (e: Record<string, unknown>) => void, private readonly observed: () => Node | undefined = () => undefined) {}

  get current(): Node | undefined {
    return this.node;
  }

  async register(): Promise<Node> {
    const wanted = nodeObject(this.facts);
    try {
      this.node = await this.kube.create<Node & KubeObject>(Resources.nodes, wanted as Node & KubeObject, { fieldManager: FieldManager });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // The node exists (this agent restarted): take it over with this agent's labels and status.
      await this.kube.patch(Resources.nodes, this.facts.name, { metadata: { labels: wanted.metadata.labels } }, { type: 'merge', fieldManager: FieldManager });
      this.node = await this.writeStatus(wanted.status!);
    }
    this.lastWritten = this.node!.status;
    this.lastWrittenAt = Date.now();
    await this.renewLease();
    return this.node!;
  }

  private async writeStatus(status: NonNullable<Node['status']>): Promise<Node> {
    const node = await this.kube.patch<Node>(Resources.nodes, this.facts.name, { status }, { type: 'merge', subresource: 'status', fieldManager: FieldManager });
    this.lastWritten = status;
    this.lastWrittenAt = Date.now();
    return node;
  }

  private async renewLease(): Promise<void> {
    const name = this.facts.name;
    const spec = { holderIdentity: name, leaseDurationSeconds: this.opts.leaseDurationSeconds, renewTime: microTime() };
    try {
      const lease = await this.kube.get<KubeObject & { spec?: object }>(Resources.leases, name, { namespace: LeaseNamespace });
      await this.kube.update(Resources.leases, { ...lease, spec: { ...lease.spec, ...spec } }, { namespace: LeaseNamespace });
    } catch (err) {
      if (!isNotFound(err) || !this.node) throw err;
      const owner = { apiVersion: 'v1', kind: 'Node', name, uid: this.node.metadata.uid! };
      await this.kube.create(Resources.leases, { metadata: { name, namespace: LeaseNamespace, ownerReferences: [owner] }, spec }, { namespace: LeaseNamespace });
    }
  }

  private async updateStatus(): Promise<void> {
    const current = this.observed()?.status ?? this.lastWritten;
    const next = nodeStatus(this.facts, current?.conditions);
    const due = Date.now() - this.lastWrittenAt >= this.opts.statusReportMs;
    if (!due && current && !changed(next, current)) return;
    try {
      this.node = await this.writeStatus(next);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.log({ level: 'warn', msg: 'node object is gone; registering again', node: this.facts.name });
      await this.register();
    }
  }

  /** Lease renewals and status updates until stop(); failures are logged and retried at the next tick. */
  start(): void {
    const every = (ms: number, what: string, work: () => Promise<void>) => {
      let busy = false;
      const t = setInterval(() => {
        if (busy || this.stopped) return;
        busy = true;
        work().catch((err: Error) => this.log({ level: 'warn', msg: `${what} failed`, node: this.facts.name, error: err.message })).finally(() => (busy = false));
      }, ms);
      t.unref();
      this.timers.push(t);
    };
    every(this.opts.renewIntervalMs, 'lease renewal', () => this.renewLease());
    every(this.opts.statusUpdateMs, 'node status update', () => this.updateStatus());
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
  }
}
