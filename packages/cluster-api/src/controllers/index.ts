/** The built-in controllers `cluster-api serve` runs beside the API: started together, stopped together. */
import type { Registry } from '../registry/rest.js';
import { startCrdController } from './crd.js';
import { startGarbageCollector } from './gc.js';
import type { Controller, ControllerOptions } from './loop.js';
import { startNamespaceController } from './namespace.js';
import { startPodReaper } from './pod-reaper.js';
import { startEventTtl } from './event-ttl.js';

export type { Controller, ControllerOptions } from './loop.js';

/** `eventTtlMs`: how long an Event lives after its last occurrence (kube-apiserver's --event-ttl; default 1 h). */
export const startControllers = (registry: Registry, opts: ControllerOptions & { eventTtlMs?: number } = {}): Controller => {
  const all = [
    startCrdController(registry, opts),
    startGarbageCollector(registry, opts),
    startNamespaceController(registry, opts),
    startPodReaper(registry, opts),
    startEventTtl(registry, opts),
  ];
  return { stop: async () => void (await Promise.all(all.map((c) => c.stop()))) };
};
