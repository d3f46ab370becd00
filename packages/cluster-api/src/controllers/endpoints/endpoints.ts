/**
 * The endpoints controller (endpoints_controller.go): for each Service with a selector, an
 * Endpoints object of the same name and labels listing the selected pods that have an IP — ready
 * ones in `addresses`, the others in `notReadyAddresses` (all ready with publishNotReadyAddresses),
 * each with nodeName, targetRef and, under a headless Service, hostname — per service port resolved
 * on the pod (named targetPorts by container port name), repacked into subsets of equal ports
 * (RepackSubsets). Headless Services' Endpoints carry `service.kubernetes.io/headless`. A Service
 * without selector keeps Endpoints written by hand; a deleted Service's Endpoints go.
 */
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { arr, obj, spec, str, type Obj } from '../../registry/kinds/common.js';
import { errorText, objectKey, served, splitKey, type ControllerContext, type Served } from '../context.js';
import { keyed } from '../reconciler.js';
import type { EventRecorder } from '@func/kube-client';
import { semanticEqual } from '../hash.js';
import { ignoreRaces, inNamespace, type Controller } from '../shared.js';
import { isReady } from '../pods.js';
import { WorkQueue } from '../queue.js';
import { endpointPort, findPort, followServicePods, hostnameFor, isEndpoint, managesEndpoints, podIPs, selectedPods, targetRef } from '../service-pods.js';

export const HeadlessLabel = 'service.kubernetes.io/headless';
const TriggerAnnotation = 'endpoints.kubernetes.io/last-change-trigger-time';
const LeaderAnnotation = 'control-plane.alpha.kubernetes.io/leader';

interface Address {
  address: Obj;
  ready: boolean;
}

const portKey = (p: Obj): string => JSON.stringify([p.name ?? '', p.port, p.protocol, p.appProtocol ?? '']);
const byIp = (a: Obj, b: Obj): number => (str(a.ip) < str(b.ip) ? -1 : str(a.ip) > str(b.ip) ? 1 : str(obj(a.targetRef).uid) < str(obj(b.targetRef).uid) ? -1 : 1);

/** RepackSubsets: addresses grouped by the exact set of ports they offer, sorted. */
export const repack = (entries: { port?: Obj; address: Address }[]): Obj[] => {
  const byPort = new Map<string, { port?: Obj; addresses: Map<string, Address> }>();
  for (const e of entries) {
    const key = e.port ? portKey(e.port) : 'none';
    if (!byPort.has(key)) byPort.set(key, { port: e.port, addresses: new Map() });
    byPort.get(key)!.addresses.set(`${str(e.address.address.ip)}/${str(obj(e.address.address.targetRef).uid)}`, e.address);
  }
  const groups = new Map<string, { ports: Obj[]; addresses: Address[] }>();
  for (const { port, addresses } of byPort.values()) {
    const list = [...addresses.values()];
    const key = JSON.stringify(list.map((a) => [a.address.ip, obj(a.address.targetRef).uid, a.ready]).sort());
    if (!groups.has(key)) groups.set(key, { ports: [], addresses: list });
    if (port) groups.get(key)!.ports.push(port);
  }
  const subsets = [...groups.values()].map(({ ports, addresses }) => {
    const ready = addresses.filter((a) => a.ready).map((a) => a.address).sort(byIp);
    const notReady = addresses.filter((a) => !a.ready).map((a) => a.address).sort(byIp);
    return { ...(ready.length && { addresses: ready }), ...(notReady.length && { notReadyAddresses: notReady }), ...(ports.length && { ports: ports.sort((a, b) => (portKey(a) < portKey(b) ? -1 : 1)) }) };
  });
  return subsets.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
};

/** The subsets a Service's selected pods give. */
export const subsetsFor = (svc: KubeObject, pods: KubeObject[]): Obj[] => {
  const publish = spec(svc).publishNotReadyAddresses === true;
  const ports = arr(spec(svc).ports).map(obj);
  const entries: { port?: Obj; address: Address }[] = [];
  for (const p of pods.filter((x) => isEndpoint(x, publish))) {
    const hostname = hostnameFor(p, svc);
    const address = { ip: podIPs(p)[0], ...(hostname && { hostname }), ...(str(spec(p).nodeName) && { nodeName: str(spec(p).nodeName) }), targetRef: targetRef(p) };
    const entry = { address, ready: publish || isReady(p) };
    if (ports.length === 0) {
      if (spec(svc).clusterIP === 'None') entries.push({ address: entry });
      continue;
    }
    for (const port of ports) {
      const number = findPort(p, port);
      if (number !== undefined) entries.push({ port: endpointPort(port, number), address: entry });
    }
  }
  return repack(entries);
};

const syncEndpoints = async (services: Served, endpoints: Served, pods: Served, recorder: EventRecorder, key: string): Promise<void> => {
  const { namespace, name } = splitKey(key);
  const ctx = inNamespace(namespace);
  const svc = services.cache.get(namespace, name);
  const current = endpoints.cache.get(namespace, name);
  if (!svc) {
    if (current) await endpoints.store.delete(ctx, name, { preconditions: { uid: current.metadata.uid } }).then((w) => endpoints.cache.observeDelete(w.object, w.deleted), ignoreRaces);
    return;
  }
  if (!managesEndpoints(svc)) return;
  const subsets = subsetsFor(svc, selectedPods(svc, pods.cache));
  const labels: Record<string, string> = { ...svc.metadata.labels };
  if (spec(svc).clusterIP === 'None') labels[HeadlessLabel] = '';
  if (current && semanticEqual(current.subsets, subsets) && semanticEqual(current.metadata.labels, labels)) return;
  const annotations = { ...current?.metadata.annotations, [TriggerAnnotation]: new Date().toISOString() };
  const body: KubeObject = { apiVersion: 'v1', kind: 'Endpoints', metadata: { ...(current?.metadata ?? { name, namespace }), labels, annotations }, subsets };
  if (subsets.length === 0) delete body.subsets;
  try {
    const { object } = current ? await endpoints.store.update(ctx, name, body) : await endpoints.store.create(ctx, body);
    endpoints.cache.observe(object);
  } catch (err) {
    if (isApiError(err) && (err.code === 409 || err.code === 403 || err.code === 404)) throw err;
    recorder.event(svc, 'Warning', current ? 'FailedToUpdateEndpoint' : 'FailedToCreateEndpoint',
      `Failed to ${current ? 'update' : 'create'} endpoint ${namespace}/${name}: ${errorText(err)}`);
    throw err;
  }
};

export const startEndpointsController = (ctx: ControllerContext): Controller => {
  const services = served(ctx, '', 'v1', 'services');
  const endpoints = served(ctx, '', 'v1', 'endpoints');
  const pods = served(ctx, '', 'v1', 'pods');
  if (!services || !endpoints || !pods) return { stop: async () => undefined };
  const recorder = ctx.events.recorder('endpoint-controller');
  const queue = new WorkQueue('endpoints-controller', (key) => syncEndpoints(services, endpoints, pods, recorder, key), { log: ctx.log });
  followServicePods(services.cache, pods.cache, (key) => queue.add(key));
  // Endpoints of a selecting Service changed by someone else are put back.
  endpoints.cache.on((_, ep) => {
    const svc = services.cache.get(ep.metadata.namespace, ep.metadata.name!);
    if (svc && managesEndpoints(svc)) queue.add(objectKey(ep));
  });
  // checkLeftoverEndpoints: Endpoints whose Service went while nothing watched go at start (leader-election records stay).
  void Promise.all([services.cache.synced, endpoints.cache.synced]).then(() => {
    for (const ep of endpoints.cache.list()) if (!ep.metadata.annotations?.[LeaderAnnotation]) queue.add(objectKey(ep));
  });
  return keyed(queue, [services.cache, endpoints.cache, pods.cache]);
};
