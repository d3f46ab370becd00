/**
 * The scheduler: binds pending pods (no spec.nodeName, this schedulerName) to nodes, as
 * kube-scheduler does, and is a client of the API like any other (in process by default, or on its
 * own through a kubeconfig). One pod at a time: filters (filters.ts) then scores (scores.ts), the best
 * node (ties broken at random) assumed at once and bound through pods/binding while the next pod is
 * scheduled. A pod that fits nowhere gets PodScheduled=False/Unschedulable with kube-scheduler's
 * message and a FailedScheduling event, and is parked in the scheduling queue (queue.ts): it is tried
 * again only on a cluster event that could make it fit (cluster-events.ts), once its back-off (1 s
 * doubling to 10 s per pod) is over, or after 5 minutes. Nothing runs while such pods wait, and the
 * scheduler's own writes about a pod (its condition, its events) do not send it back to the queue.
 * It acts through an ApiClient: in `serve`, in process as `system:kube-scheduler`; in
 * `cluster-api scheduler`, over HTTP with its kubeconfig's credentials.
 */
import { EventBroadcaster, Informer, type EventRecorder } from '@func/kube-client';
import type { ApiClient, ResourceClient } from '../client/interface.js';
import { apiEventSink } from '../client/events.js';
import { apiListerWatcher } from '../client/lister-watcher.js';
import { inNamespace } from '../controllers/shared.js';
import type { Node, Pod } from '../node/types.js';
import { fitErrorMessage, refusal, type Refusal } from './filters.js';
import { hostPorts, nodeInfos, podRequests, type NodeInfo } from './node-info.js';
import { nodeUpdateMatters, podFreedRoom, podUpdateMatters } from './cluster-events.js';
import { SchedulingQueue } from './queue.js';
import { scoreNodes } from './scores.js';

export interface SchedulerOptions {
  /** What the scheduler reads and writes through (pods, nodes, pods/binding, pods/status, events). */
  client: ApiClient;
  /** Pods naming another spec.schedulerName are left alone (default `default-scheduler`). */
  schedulerName?: string;
  /** podInitialBackoffDuration (1 s). */
  backoffInitialMs?: number;
  /** podMaxBackoffDuration (10 s). */
  backoffMaxMs?: number;
  /** podMaxInUnschedulablePodsDuration: unschedulable pods are tried again at least this often (5 minutes). */
  flushMs?: number;
  log?: (entry: Record<string, unknown>) => void;
}

const keyOf = (p: Pod) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`;
const MaxBindsInFlight = 32;
/**
 * PodScheduled conditions written at once; the rest wait, the latest per pod (as kube-scheduler's
 * client is held to its QPS): a burst of unschedulable pods does not open a connection each.
 */
const MaxConditionWritesInFlight = 8;

export class Scheduler {
  private readonly name: string;
  private readonly podClient: ResourceClient;
  private readonly pods: Informer<Pod>;
  private readonly nodes: Informer<Node>;
  private readonly broadcaster: EventBroadcaster;
  private readonly events: EventRecorder;
  private readonly queue: SchedulingQueue;
  private readonly assumed = new Map<string, { pod: Pod; node: string }>();
  /** Pods with a spec.nodeName, by uid: what a snapshot of the nodes counts, without walking every pending pod. */
  private readonly assigned = new Map<string, Pod>();
  private binds = 0;
  private readonly conditionWrites = new Map<string, { pod: Pod; patch: object }>();
  private conditionWriters = 0;
  private timer?: NodeJS.Timeout;
  private pumping = false;
  private stopped = false;
  /** Scheduling attempts made (each pod popped from activeQ and run through the filters). */
  attempts = 0;

  constructor(private readonly opts: SchedulerOptions) {
    const { client } = opts;
    const resource = (plural: string) => {
      const found = client.find('', 'v1', plural);
      if (!found) throw new Error(`the scheduler needs ${plural}, which the API does not serve`);
      return found;
    };
    const nodes = resource('nodes');
    this.podClient = resource('pods');
    this.name = opts.schedulerName ?? 'default-scheduler';
    this.broadcaster = new EventBroadcaster(apiEventSink(client), opts.log);
    this.events = this.broadcaster.recorder({ component: this.name, instance: this.name });
    this.queue = new SchedulingQueue({
      initialBackoffMs: opts.backoffInitialMs ?? 1000,
      maxBackoffMs: opts.backoffMaxMs ?? 10_000,
      maxUnschedulableMs: opts.flushMs ?? 300_000,
      onActive: () => this.kick(),
    });
    const quiet = () => undefined;
    this.pods = new Informer<Pod>(apiListerWatcher<Pod>(this.podClient), this.podClient.definition, { namespace: '', onError: quiet })
      .on('add', (p) => (this.track(p), this.consider(p)))
      .on('update', (p, old) => this.podChanged(p, old))
      .on('delete', (p) => this.podGone(p));
    this.nodes = new Informer<Node>(apiListerWatcher<Node>(nodes), nodes.definition, { onError: quiet })
      .on('add', () => this.clusterChanged('NodeAdd'))
      .on('update', (n, old) => (!old || nodeUpdateMatters(old, n)) && this.clusterChanged('NodeUpdate'));
  }

  async start(): Promise<void> {
    this.nodes.start();
    this.pods.start();
    await Promise.all([this.nodes.synced, this.pods.synced]);
    this.kick();
  }

  private pending(p: Pod): boolean {
    const phase = p.status?.phase;
    return !p.spec.nodeName && (p.spec.schedulerName ?? 'default-scheduler') === this.name && !p.metadata.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
  }

  private consider(p: Pod): void {
    if (!this.pending(p) || this.assumed.has(p.metadata.uid ?? '')) return;
    this.queue.add(keyOf(p));
  }

  private track(p: Pod): void {
    if (p.spec.nodeName) this.assigned.set(p.metadata.uid ?? '', p);
    else this.assigned.delete(p.metadata.uid ?? '');
  }

  private podChanged(p: Pod, old?: Pod): void {
    this.track(p);
    if (p.spec.nodeName) {
      this.assumed.delete(p.metadata.uid ?? '');
      this.queue.forget(keyOf(p));
      this.conditionWrites.delete(keyOf(p));
      if (old && podFreedRoom(old, p)) this.clusterChanged('AssignedPodUpdate');
      return;
    }
    if (!this.pending(p)) return this.queue.forget(keyOf(p));
    // skipPodUpdate: what the scheduler itself wrote (PodScheduled, status) is no reason to try again.
    if (!old || podUpdateMatters(old, p)) this.queue.update(keyOf(p));
    this.consider(p);
  }

  private podGone(p: Pod): void {
    this.assigned.delete(p.metadata.uid ?? '');
    this.assumed.delete(p.metadata.uid ?? '');
    this.queue.forget(keyOf(p));
    this.conditionWrites.delete(keyOf(p));
    if (p.spec.nodeName) this.clusterChanged('AssignedPodDelete');
  }

  /** A change that could make unschedulable pods fit: they go back to activeQ, or backoffQ. */
  private clusterChanged(event: string): void {
    const moved = this.queue.moveAll();
    if (moved) this.opts.log?.({ level: 'debug', msg: 'unschedulable pods moved', event, pods: moved });
  }

  private kick(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => ((this.timer = undefined), this.pump()), 0);
  }

  /** Schedules every active pod against one snapshot of the nodes, updated as pods are placed. */
  private pump(): void {
    if (this.pumping || this.stopped) return;
    this.pumping = true;
    try {
      const keys = this.queue.drain();
      if (keys.length === 0) return;
      const infos = nodeInfos(this.nodes.list(), [...this.assigned.values()], this.assumed);
      let i = 0;
      for (; i < keys.length && this.binds < MaxBindsInFlight; i++) {
        const key = keys[i]!;
        const [namespace, name] = key.split('/');
        const pod = this.pods.get(name!, namespace);
        if (!pod || !this.pending(pod) || this.assumed.has(pod.metadata.uid ?? '')) {
          this.queue.forget(key);
          continue;
        }
        this.attempts++;
        this.scheduleOne(pod, infos);
      }
      this.queue.requeue(keys.slice(i));
    } finally {
      this.pumping = false;
    }
  }
  private scheduleOne(pod: Pod, infos: NodeInfo[]): void {
    const refusals: Refusal[] = [];
    const feasible = infos.filter((info) => {
      const r = refusal(pod, info);
      if (r) refusals.push(r);
      return !r;
    });
    if (feasible.length === 0) return void this.unschedulable(pod, fitErrorMessage(infos.length, refusals));
    const scores = scoreNodes(pod, feasible);
    const best = Math.max(...scores);
    const ties = feasible.filter((_, i) => scores[i] === best);
    const chosen = ties[Math.floor(Math.random() * ties.length)]!;
    this.assume(pod, chosen);
    void this.bind(pod, chosen.name);
  }

  private assume(pod: Pod, info: NodeInfo): void {
    this.assumed.set(pod.metadata.uid ?? '', { pod, node: info.name });
    info.pods.push(pod);
    for (const [k, v] of Object.entries({ ...podRequests(pod), pods: 1 })) info.requested[k] = (info.requested[k] ?? 0) + v;
    for (const p of hostPorts(pod)) info.ports.add(p);
    this.queue.forget(keyOf(pod));
  }

  private async bind(pod: Pod, node: string): Promise<void> {
    this.binds++;
    const { namespace = '', name = '' } = pod.metadata;
    try {
      const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name, namespace }, target: { apiVersion: 'v1', kind: 'Node', name: node } };
      await this.podClient.post!(inNamespace(namespace), name, 'binding', binding);
      this.events.event(pod, 'Normal', 'Scheduled', `Successfully assigned ${namespace}/${name} to ${node}`);
    } catch (err) {
      // ForgetPod: the room it held is free again, for the others first; the pod itself backs off.
      this.assumed.delete(pod.metadata.uid ?? '');
      this.opts.log?.({ level: 'warn', msg: 'binding failed', pod: keyOf(pod), node, error: (err as Error).message });
      this.clusterChanged('AssignedPodDelete');
      this.queue.backOffNow(keyOf(pod));
    } finally {
      this.binds--;
      this.kick();
    }
  }

  /** PodScheduled=False with the reason, when it says something new; FailedScheduling every time. */
  private unschedulable(pod: Pod, message: string): void {
    this.queue.unschedulableNow(keyOf(pod));
    this.events.event(pod, 'Warning', 'FailedScheduling', message);
    const conditions = pod.status?.conditions ?? [];
    const was = conditions.find((c) => c.type === 'PodScheduled');
    if (was?.status === 'False' && was.reason === 'Unschedulable' && was.message === message) return;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const scheduled = { type: 'PodScheduled', status: 'False', lastProbeTime: null, lastTransitionTime: was?.status === 'False' ? was.lastTransitionTime : now, reason: 'Unschedulable', message };
    // A strategic merge patch of this one condition (merged by type): whatever else wrote the pod's
    // conditions meanwhile stays.
    const patch = { metadata: { uid: pod.metadata.uid }, status: { conditions: [scheduled] } };
    this.conditionWrites.delete(keyOf(pod));
    this.conditionWrites.set(keyOf(pod), { pod, patch });
    while (this.conditionWriters < MaxConditionWritesInFlight && this.conditionWrites.size > 0) void this.writeConditions();
  }

  /** One writer: takes the oldest waiting condition until none is left. */
  private async writeConditions(): Promise<void> {
    this.conditionWriters++;
    try {
      for (const [key, { pod, patch }] of this.conditionWrites) {
        if (this.stopped) break;
        this.conditionWrites.delete(key);
        await this.podClient.patch({ ...inNamespace(pod.metadata.namespace), fieldManager: this.name }, pod.metadata.name ?? '', 'strategic', patch, 'status')
          .catch((err: Error) => this.opts.log?.({ level: 'debug', msg: 'pod condition not written', pod: key, error: err.message }));
      }
    } finally {
      this.conditionWriters--;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.queue.close();
    this.conditionWrites.clear();
    await Promise.all([this.pods.stop(), this.nodes.stop(), this.broadcaster.close()]);
  }
}
