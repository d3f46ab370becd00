/** The built-in controllers `cluster-api serve` runs beside the API: started together, stopped together. */
import type { Registry } from '../registry/rest.js';
import { startClusterRoleAggregation } from './cluster-role-aggregation.js';
import { startCrdController } from './crd.js';
import { startGarbageCollector } from './gc.js';
import type { Controller, ControllerOptions } from './loop.js';
import { startNamespaceController } from './namespace.js';
import { startPodReaper } from './pod-reaper.js';

export type { Controller, ControllerOptions } from './loop.js';

export const startControllers = (registry: Registry, opts: ControllerOptions = {}): Controller => {
  const all = [
    startCrdController(registry, opts),
    startGarbageCollector(registry, opts),
    startNamespaceController(registry, opts),
    startPodReaper(registry, opts),
    startClusterRoleAggregation(registry, opts),
  ];
  return { stop: async () => void (await Promise.all(all.map((c) => c.stop()))) };
};
