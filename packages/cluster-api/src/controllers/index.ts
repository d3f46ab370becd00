/** The built-in controllers `cluster-api serve` runs beside the API: started together, stopped together. */
import type { Registry } from '../registry/rest.js';
import { startCrdController } from './crd.js';
import { startGarbageCollector } from './gc.js';
import type { Controller, ControllerOptions } from './loop.js';
import { startNamespaceController } from './namespace.js';
import { startNodeIpam, type IpamOptions } from './node-ipam.js';
import { startNodeLifecycle, type NodeLifecycleOptions } from './node-lifecycle.js';
import { startPodReaper } from './pod-reaper.js';
import { startEventTtl } from './event-ttl.js';

export type { Controller, ControllerOptions } from './loop.js';

export interface ControllersOptions extends ControllerOptions {
  /** Node IPAM (pod CIDRs) and node lifecycle (health, taints, evictions). */
  nodes?: IpamOptions & NodeLifecycleOptions;
  /** How long an Event lives after its last occurrence (kube-apiserver's --event-ttl; default 1 h). */
  eventTtlMs?: number;
}

export const startControllers = (registry: Registry, opts: ControllersOptions = {}): Controller => {
  const { nodes, ...common } = opts;
  const all = [
    startCrdController(registry, common),
    startGarbageCollector(registry, common),
    startNamespaceController(registry, common),
    startPodReaper(registry, common),
    startEventTtl(registry, common),
    startNodeIpam(registry, { ...common, ...nodes }),
    startNodeLifecycle(registry, { ...common, ...nodes }),
  ];
  return { stop: async () => void (await Promise.all(all.map((c) => c.stop()))) };
};
