/**
 * The built-in controllers `cluster-api serve` runs beside the API, as kube-controller-manager runs
 * them beside kube-apiserver: started together, stopped together, each on or off by `--controllers`
 * (names.ts). The CRD controller, the pod reaper and the Event TTL are the API server's own and
 * always run.
 */
import type { Registry } from '../registry/rest.js';
import { Caches } from './cache.js';
import { startClusterRoleAggregation } from './cluster-role-aggregation.js';
import type { ControllerContext } from './context.js';
import { startCrdController } from './crd.js';
import { startDeploymentController } from './deployment/controller.js';
import { EventSink } from './events.js';
import { startEventTtl } from './event-ttl.js';
import { startGarbageCollector } from './gc.js';
import type { Controller, ControllerOptions } from './loop.js';
import { isEnabled } from './names.js';
import { startNamespaceController } from './namespace.js';
import { startNodeIpam, type IpamOptions } from './node-ipam.js';
import { startNodeLifecycle, type NodeLifecycleOptions } from './node-lifecycle.js';
import { startPodReaper } from './pod-reaper.js';
import { ReplicaSets, ReplicationControllers, startReplicaController } from './replica-set.js';
import { startStatefulSetController } from './stateful-set.js';
import { startDaemonSetController } from './daemon-set.js';
import { startJobController } from './job.js';
import { startCronJobController } from './cron-job.js';
import { startTtlAfterFinished } from './ttl-after-finished.js';
import { startEndpointsController } from './endpoints.js';
import { startEndpointSliceController } from './endpoint-slices.js';
import { certificateControllers } from '../certificates/controllers.js';

export type { Controller, ControllerOptions } from './loop.js';
export { ControllerNames, isEnabled, unknownControllers } from './names.js';

export interface ControllersOptions extends ControllerOptions {
  /** Node IPAM (pod CIDRs) and node lifecycle (health, taints, evictions). */
  nodes?: IpamOptions & NodeLifecycleOptions;
  /** How long an Event lives after its last occurrence (kube-apiserver's --event-ttl; default 1 h). */
  eventTtlMs?: number;
  /** `--controllers` words (default `['*']`). */
  controllers?: readonly string[];
  /** The CA that signs approved CertificateSigningRequests. */
  signing?: ControllerContext['signing'];
}

type Start = (ctx: ControllerContext, opts: ControllerOptions, nodes: ControllersOptions['nodes']) => Controller;

/** Each controller's start, by its kube-controller-manager name. */
const Starts: Record<string, Start> = {
  'garbage-collector-controller': (ctx, opts) => startGarbageCollector(ctx.registry, opts),
  'namespace-controller': (ctx, opts) => startNamespaceController(ctx.registry, opts),
  'clusterrole-aggregation-controller': (ctx, opts) => startClusterRoleAggregation(ctx.registry, opts),
  'deployment-controller': (ctx) => startDeploymentController(ctx),
  'replicaset-controller': (ctx) => startReplicaController(ctx, ReplicaSets),
  'replicationcontroller-controller': (ctx) => startReplicaController(ctx, ReplicationControllers),
  'statefulset-controller': (ctx) => startStatefulSetController(ctx),
  'daemonset-controller': (ctx) => startDaemonSetController(ctx),
  'job-controller': (ctx) => startJobController(ctx),
  'cronjob-controller': (ctx) => startCronJobController(ctx),
  'ttl-after-finished-controller': (ctx, opts) => startTtlAfterFinished(ctx.registry, opts),
  'endpoints-controller': (ctx) => startEndpointsController(ctx),
  'endpointslice-controller': (ctx) => startEndpointSliceController(ctx),
  'node-ipam-controller': (ctx, opts, nodes) => startNodeIpam(ctx.registry, { ...opts, ...nodes }),
  'node-lifecycle-controller': (ctx, opts, nodes) => startNodeLifecycle(ctx.registry, { ...opts, ...nodes }),
  ...certificateControllers,
};

export const startControllers = (registry: Registry, opts: ControllersOptions = {}): Controller => {
  const { controllers: words = ['*'], eventTtlMs, nodes, signing, ...common } = opts;
  const caches = new Caches(common.log);
  const events = new EventSink(registry, common.log);
  const ctx: ControllerContext = { registry, caches, events, log: common.log, signing };
  const all = [
    startCrdController(registry, common),
    startPodReaper(registry, common),
    startEventTtl(registry, { ...common, eventTtlMs }),
    ...Object.entries(Starts).filter(([name]) => isEnabled(name, words)).map(([, start]) => start(ctx, common, nodes)),
  ];
  return {
    stop: async () => {
      await Promise.all(all.map((c) => c.stop()));
      caches.stop();
      await events.close();
    },
  };
};
