/**
 * What a pod's containers share: the pod as last seen, where it runs, its sandboxes (one per
 * runtime its containers run on), the node's services (image service, runtimes, API sources,
 * back-off tables, events) and the pod's directories. The pod worker makes one per pod;
 * container runners only read it and call back through it.
 */
import type { Backoff } from '../backoff.js';
import type { PodPlace } from './downward.js';
import type { ImageService, RuntimeService } from '../runtime/cri.js';
import type { RuntimeHandler } from '../runtime/handlers.js';
import type { LogLimits } from '../logs/logs.js';
import type { PortTarget } from '../probes/probe-check.js';
import type { PodSources } from '../sources.js';
import type { Container, Pod, VolumeMount } from '../types.js';

export type EventType = 'Normal' | 'Warning';

export interface PodContext {
  pod(): Pod;
  place: PodPlace;
  /** The pod's sandbox on a runtime (run on first use; its IP becomes the pod's). */
  sandbox(runtime: RuntimeService): Promise<string>;
  /** Where a port of the pod is reached from the node, through a runtime's sandbox. */
  portForward(runtime: RuntimeService, port: number): { host: string; port: number } | undefined;
  /** Where the pod's container ports are reached from the node (probes, hooks). */
  target: PortTarget;
  /** An event about the pod, or about one of its containers (`spec.containers{name}`). */
  event(type: EventType, reason: string, message: string, fieldPath?: string): void;
  /** Something a status shows changed. */
  changed(): void;
  /** Sync the pod again after `ms`. */
  kick(ms: number): void;
  /** Restart back-off (CrashLoopBackOff) and image pull back-off, keyed by pod uid and container. */
  backoff: Backoff;
  pullBackoff: Backoff;
  /** The node's image service, and the runtimes that run what it holds (the first that takes an image runs it). */
  images: ImageService;
  handlers: readonly RuntimeHandler[];
  sources: PodSources;
  /** `<data-dir>/pods/<uid>`. */
  podDir: string;
  /** `<data-dir>/logs/<namespace>_<name>_<uid>`, as the kubelet's /var/log/pods. */
  logDir: string;
  logLimits: LogLimits;
  /** Volume name → path on the node, once the pod's volumes are set up. */
  volumes: ReadonlyMap<string, string>;
  mounts(c: Container): VolumeMount[];
  /** Set in every container's environment (service variables, the API server's address). */
  baseEnv: Record<string, string>;
  /** How long a failed container configuration waits before it is tried again. */
  retryMs: number;
}

/** `spec.containers{name}` / `spec.initContainers{name}`: an event's fieldPath for a container. */
export const fieldPath = (c: Container, init: boolean): string => `spec.${init ? 'initContainers' : 'containers'}{${c.name}}`;
