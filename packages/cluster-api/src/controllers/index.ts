/**
 * The controllers of an API server process, as kube-apiserver and kube-controller-manager run them:
 * the API server's own loops always, in process, as system:apiserver; and the controller manager
 * (manager.ts) in process too unless it runs elsewhere (`cluster-api controller-manager`), each
 * controller acting as its ServiceAccount through the in-process client, authorized by the server's
 * authorizer as its requests over HTTP would be.
 */
import { ApiServerUser, inProcessClient, serviceAccountUser, type AuthorizerSource } from '../client/in-process.js';
import { leaseClient } from '../client/lease.js';
import type { Registry, UserInfo } from '../registry/rest.js';
import { Controllers, type ControllerSettings } from './descriptors.js';
import type { Controller } from './shared.js';
import { runControllers, startControllerManager, type LeaderElection } from './manager.js';

export type { Controller, ControllerOptions } from './shared.js';
export { isEnabled, unknownControllers } from './names.js';
export { Controllers, type ControllerDescriptor, type ControllerSettings } from './descriptors.js';
export { runControllers, startControllerManager, type ManagerOptions } from './manager.js';

/** kube-controller-manager's own user (its shared informers, its Lease). */
export const ControllerManagerUser: UserInfo = { name: 'system:kube-controller-manager', uid: '', groups: ['system:authenticated'] };

export interface ControllersOptions extends ControllerSettings {
  /** `--controllers` words (default `['*']`). */
  controllers?: readonly string[];
  /** Run the controller manager here (default true); false: only the API server's own loops. */
  controllerManager?: boolean;
  /** Elect a leader among the API servers sharing the store (etcd); the Lease's duration in seconds. */
  leaderElection?: Omit<LeaderElection, 'client'>;
}

/** The API server's own loops (CRD establishing, pod reaping, Event expiry), as system:apiserver. */
export const startApiServerLoops = (registry: Registry, authorizer: AuthorizerSource, settings: ControllerSettings = {}): Controller => {
  const apiServer = inProcessClient(registry, authorizer, ApiServerUser);
  return runControllers(Controllers.filter((d) => d.apiServer), { ...settings, clientFor: () => apiServer }, registry);
};

/**
 * kube-controller-manager in this process: each controller acts as its ServiceAccount through the
 * in-process client (authorized as its requests over HTTP would be); with `leaderElection`, only
 * the holder of the kube-system/kube-controller-manager Lease runs them.
 */
export const startInProcessControllerManager = (registry: Registry, authorizer: AuthorizerSource, opts: Omit<ControllersOptions, 'controllerManager'> = {}): Controller => {
  const { controllers, leaderElection, ...settings } = opts;
  const manager = inProcessClient(registry, authorizer, ControllerManagerUser);
  const clients = new Map<string, ReturnType<typeof inProcessClient>>();
  const clientFor = (sa: string | undefined) => {
    if (sa === undefined) return manager;
    if (!clients.has(sa)) clients.set(sa, inProcessClient(registry, authorizer, serviceAccountUser('kube-system', sa)));
    return clients.get(sa)!;
  };
  const clientAs = (namespace: string, sa: string) => inProcessClient(registry, authorizer, serviceAccountUser(namespace, sa));
  return startControllerManager({ ...settings, controllers, clientFor, clientAs, ...(leaderElection && { leaderElection: { ...leaderElection, client: leaseClient(manager) } }) });
};

/** Both, as an API server that runs its controller manager beside it (`controllerManager: false`: its own loops only). */
export const startControllers = (registry: Registry, authorizer: AuthorizerSource, opts: ControllersOptions = {}): Controller => {
  const { controllers, controllerManager = true, leaderElection, ...settings } = opts;
  const own = startApiServerLoops(registry, authorizer, settings);
  const managed = controllerManager ? startInProcessControllerManager(registry, authorizer, { ...settings, controllers, leaderElection }) : undefined;
  return {
    stop: async () => {
      await managed?.stop();
      await own.stop();
    },
  };
};
