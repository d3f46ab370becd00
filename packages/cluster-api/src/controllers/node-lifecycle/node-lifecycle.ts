/**
 * The node lifecycle controller, as kube-controller-manager's (node lifecycle + taint eviction):
 *
 * - Health: a node is heard from when its Lease (kube-node-lease/<node>) is renewed or its Ready
 *   condition's heartbeat moves, measured on this controller's clock. Silent for longer than the
 *   grace period (`--node-monitor-grace-period`, 40 s), its kubelet conditions become Unknown
 *   ("Kubelet stopped posting node status."), a NodeNotReady event is recorded and its pods are
 *   marked not Ready.
 * - Taints by condition: Ready=False → node.kubernetes.io/not-ready, Ready=Unknown →
 *   node.kubernetes.io/unreachable, each NoSchedule and NoExecute (with timeAdded);
 *   spec.unschedulable → node.kubernetes.io/unschedulable:NoSchedule. Removed when they no longer hold.
 * - Eviction: a pod on a node with a NoExecute taint it does not tolerate is deleted at once; one
 *   that tolerates it for tolerationSeconds is deleted that long after the taint was added (marked
 *   DisruptionTarget/DeletionByTaintManager first, with a TaintManagerEviction event). Its
 *   controller then makes a replacement, which the scheduler places on a healthy node.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import type { Taint } from '../../api/taints.js';
import type { ApiClient } from '../../client/interface.js';
import { follow, ignoreRaces, SystemContext, type Controller, type ControllerOptions } from '../shared.js';
import { startSingleton } from '../reconciler.js';
import type { EventRecorder } from '@func/kube-client';
import { evictionDue, markPodsNotReady } from './eviction.js';

export interface NodeLifecycleOptions extends ControllerOptions {
  /** How long a node may be silent before it is Unknown (default 40 s). */
  gracePeriodMs?: number;
  /** How often nodes are checked (--node-monitor-period, default 5 s). */
  monitorPeriodMs?: number;
}

type Condition = { type: string; status: string; reason?: string; message?: string; lastHeartbeatTime?: string; lastTransitionTime?: string };
type NodeObj = KubeObject & { spec?: { taints?: Taint[]; unschedulable?: boolean }; status?: { conditions?: Condition[] } };

const KubeletConditions = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'];
const NotReady = 'node.kubernetes.io/not-ready';
const Unreachable = 'node.kubernetes.io/unreachable';
const Unschedulable = 'node.kubernetes.io/unschedulable';
const Managed = new Set([NotReady, Unreachable, Unschedulable]);

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
const ready = (n: NodeObj) => n.status?.conditions?.find((c) => c.type === 'Ready');

/** The taints the node's conditions call for, keeping timeAdded of those it has already. */
function wantedTaints(n: NodeObj): Taint[] {
  const status = ready(n)?.status ?? 'Unknown';
  const key = status === 'True' ? undefined : status === 'False' ? NotReady : Unreachable;
  const had = n.spec?.taints ?? [];
  const keep = (t: Taint): Taint => had.find((h) => h.key === t.key && h.effect === t.effect) ?? t;
  const wanted: Taint[] = key ? [keep({ key, effect: 'NoSchedule' }), keep({ key, effect: 'NoExecute', timeAdded: now() })] : [];
  if (n.spec?.unschedulable) wanted.push(keep({ key: Unschedulable, effect: 'NoSchedule' }));
  return [...had.filter((t) => !Managed.has(t.key)), ...wanted];
}

/** `informers`: what Leases are read through (kube-controller-manager's shared informers, its own identity); `events`: the node-controller's recorder. */
export const startNodeLifecycle = (registry: ApiClient, opts: NodeLifecycleOptions, informers: ApiClient, events: EventRecorder): Controller => {
  const nodes = registry.find('', 'v1', 'nodes');
  const leases = informers.find('coordination.k8s.io', 'v1', 'leases');
  const pods = registry.find('', 'v1', 'pods')!;
  if (!nodes || !leases) return { stop: async () => undefined };
  const grace = opts.gracePeriodMs ?? 40_000;
  /** When each node was last heard from, and the Lease renewTime / Ready heartbeat that said so. */
  const heard = new Map<string, { lease?: string; node?: string; at: number }>();
  const started = Date.now();

  const hear = (node: string, source: 'lease' | 'node', mark: string) => {
    const was = heard.get(node);
    if (was?.[source] !== mark) heard.set(node, { ...was, [source]: mark, at: Date.now() });
  };

  const markUnknown = async (n: NodeObj): Promise<NodeObj> => {
    const t = now();
    const conditions = KubeletConditions.map((type) => {
      const c = n.status?.conditions?.find((x) => x.type === type);
      return c
        ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastTransitionTime: c.status === 'Unknown' ? c.lastTransitionTime : t }
        : { type, status: 'Unknown', reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.', lastHeartbeatTime: t, lastTransitionTime: t };
    });
    const others = (n.status?.conditions ?? []).filter((c) => !KubeletConditions.includes(c.type));
    const { object } = await nodes.update(SystemContext, n.metadata.name!, { ...n, status: { ...n.status, conditions: [...others, ...conditions] } }, 'status');
    events.event({ kind: 'Node', apiVersion: 'v1', name: n.metadata.name!, uid: n.metadata.uid }, 'Normal', 'NodeNotReady', `Node ${n.metadata.name} status is now: NodeNotReady`);
    await markPodsNotReady(pods, n.metadata.name!, events);
    return object as NodeObj;
  };

  const pass = async () => {
    let soonest = Infinity;
    const { items } = await nodes.list(SystemContext, {});
    for (let n of items as NodeObj[]) {
      const name = n.metadata.name!;
      const last = heard.get(name)?.at ?? started;
      if (Date.now() - last > grace && ready(n)?.status !== 'Unknown') n = await markUnknown(n).catch((e) => (ignoreRaces(e), n));
      else soonest = Math.min(soonest, last + grace);
      const taints = wantedTaints(n);
      // Compared as values: the stored taints may list their fields in another order.
      if (!isDeepStrictEqual(taints, n.spec?.taints ?? [])) {
        await nodes.update(SystemContext, name, { ...n, spec: { ...n.spec, taints: taints.length ? taints : undefined } }).catch(ignoreRaces);
      }
      const due = await evictionDue(pods, name, taints.filter((t) => t.effect === 'NoExecute'), events);
      soonest = Math.min(soonest, due);
    }
    if (Number.isFinite(soonest)) return { requeueAfter: Math.max(1, soonest - Date.now()) };
  };

  const loop = startSingleton('node-lifecycle-controller', pass, opts.monitorPeriodMs ?? 5000, { log: opts.log });
  const watches = [
    follow(nodes, loop, (type, n) => {
      if (type === 'DELETED') return void heard.delete(n.metadata.name!);
      hear(n.metadata.name!, 'node', ready(n as NodeObj)?.lastHeartbeatTime ?? '');
      loop.kick();
    }),
    follow(leases, loop, (type, l) => {
      if (type !== 'DELETED' && l.metadata.namespace === 'kube-node-lease') hear(l.metadata.name!, 'lease', String((l.spec as { renewTime?: string } | undefined)?.renewTime));
    }),
  ];
  return {
    stop: async () => {
      for (const w of watches) w.close();
      await loop.stop();
    },
  };
};

