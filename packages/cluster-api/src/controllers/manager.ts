/**
 * The controller manager (kube-controller-manager): starts the controllers the descriptors list and
 * `--controllers` turns on, each with its own API client (its ServiceAccount's identity), over one
 * set of shared caches filled through the manager's own client and one event writer. With leader
 * election, only the holder of the `kube-system/kube-controller-manager` Lease runs them: a manager
 * that loses the Lease stops its controllers and campaigns again, and one that takes it over starts
 * them afresh (new caches: nothing of the previous term is trusted).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { EventBroadcaster, runWhileLeading, type LeaseClient } from '@func/kube-client';
import { apiEventSink } from '../client/events.js';
import type { ApiClient } from '../client/interface.js';
import type { Registry } from '../registry/rest.js';
import { Caches } from './cache.js';
import type { ControllerContext } from './context.js';
import { Controllers, type ControllerDescriptor, type ControllerSettings } from './descriptors.js';
import type { Controller } from './shared.js';
import { isEnabled } from './names.js';

export interface LeaderElection {
  /** The Lease calls go through this client (the manager's own identity). */
  client: LeaseClient;
  /** kube-controller-manager's --leader-elect-lease-duration (default 15 s); renewal and retry scale with it. */
  leaseDurationSeconds?: number;
  /** Default `<hostname>_<random>`, as kube-controller-manager's. */
  identity?: string;
}

export interface ManagerOptions extends ControllerSettings {
  /** The client a controller acts through, by its ServiceAccount; undefined: the manager's own. */
  clientFor(serviceAccount: string | undefined): ApiClient;
  /** A client acting as a ServiceAccount of any namespace (ControllerContext.clientAs). */
  clientAs?(namespace: string, serviceAccount: string): ApiClient;
  /** `--controllers` words (default `['*']`). */
  controllers?: readonly string[];
  /** Absent: run at once, with nobody to share the work with. */
  leaderElection?: LeaderElection;
  /** Default: every descriptor. */
  descriptors?: readonly ControllerDescriptor[];
}

/** Starts `descriptors` now, over fresh shared caches; stop ends them, then the caches and the event writer. */
export function runControllers(descriptors: readonly ControllerDescriptor[], opts: Omit<ManagerOptions, 'leaderElection' | 'controllers' | 'descriptors'>, registry?: Registry): Controller {
  const { clientFor, clientAs, ...settings } = opts;
  const own = clientFor(undefined);
  const caches = new Caches(own, settings.log);
  const broadcaster = new EventBroadcaster(apiEventSink(own), settings.log);
  const started = descriptors.map((d) => {
    const client = clientFor(d.serviceAccount);
    const ctx: ControllerContext = { client, informers: own, caches, events: { recorder: (component) => broadcaster.recorder({ component }, apiEventSink(client)) }, log: settings.log, ...(registry && { registry }), ...(clientAs && { clientAs }), ...(settings.apiServerUrl && { apiServerUrl: settings.apiServerUrl }), ...(settings.gatewayUrl && { gatewayUrl: settings.gatewayUrl }) };
    return d.start(ctx, settings);
  });
  return {
    stop: async () => {
      await Promise.all(started.map((c) => c.stop()));
      caches.stop();
      await broadcaster.close();
    },
  };
}

/** kube-controller-manager: the enabled controllers, under the Lease when `leaderElection` is given. */
export function startControllerManager(opts: ManagerOptions): Controller {
  const { leaderElection, controllers: words = ['*'], descriptors = Controllers, ...rest } = opts;
  const enabled = descriptors.filter((d) => !d.apiServer && isEnabled(d.name, words, descriptors));
  if (!leaderElection) return runControllers(enabled, rest);
  const log = rest.log;
  const identity = leaderElection.identity ?? `${hostname()}_${randomBytes(8).toString('hex')}`;
  const duration = leaderElection.leaseDurationSeconds ?? 15;
  return runWhileLeading(leaderElection.client, {
    namespace: 'kube-system', name: 'kube-controller-manager', identity, releaseOnStop: true,
    leaseDurationSeconds: duration, renewDeadlineSeconds: (duration * 2) / 3, retryPeriodSeconds: (duration * 2) / 15,
    onStartedLeading: () => log?.({ level: 'info', msg: 'controller-manager leading', identity }),
    onStoppedLeading: () => log?.({ level: 'info', msg: 'controller-manager stopped leading', identity }),
    onError: (err) => log?.({ level: 'warn', msg: 'controller-manager leader election', error: String((err as Error)?.message ?? err) }),
  }, () => runControllers(enabled, rest));
}
