/**
 * The EndpointSlice controller (endpointslice/reconciler.go): for each Service with a selector,
 * EndpointSlices `<service>-<random>` owned by it, labelled `kubernetes.io/service-name` and
 * `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` (plus the Service's
 * labels), one address type (IPv4), at most 100 endpoints each, one group of slices per distinct set
 * of resolved ports. An endpoint per selected pod with an IP, terminating ones included, with
 * conditions ready (serving and not terminating, or publishNotReadyAddresses), serving and
 * terminating, nodeName, zone (the node's topology.kubernetes.io/zone), hostname and targetRef.
 * Existing slices are rewritten in place only when they differ; surplus ones are deleted.
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, obj, spec, str, type Obj } from '../../registry/kinds/common.js';
import { errorText, served, splitKey, type ControllerContext, type Served } from '../context.js';
import { keyed } from '../reconciler.js';
import { HeadlessLabel } from '../endpoints/endpoints.js';
import type { EventRecorder } from '@func/kube-client';
import { semanticEqual } from '../hash.js';
import { ignoreRaces, inNamespace, type Controller } from '../shared.js';
import { controllerRef, isReady } from '../pods.js';
import { WorkQueue } from '../queue.js';
import { endpointPort, findPort, followServicePods, hostnameFor, isEndpoint, managesEndpoints, podIPs, selectedPods, targetRef } from '../service-pods.js';

export const ServiceNameLabel = 'kubernetes.io/service-name';
export const ManagedByLabel = 'endpointslice.kubernetes.io/managed-by';
export const ControllerName = 'endpointslice-controller.k8s.io';
const MaxEndpointsPerSlice = 100;
const ZoneLabel = 'topology.kubernetes.io/zone';

interface Env {
  services: Served;
  slices: Served;
  pods: Served;
  nodes?: Served;
  recorder: EventRecorder;
}

const endpointOf = (env: Env, svc: KubeObject, p: KubeObject): Obj => {
  const serving = isReady(p);
  const terminating = Boolean(p.metadata.deletionTimestamp);
  const node = str(spec(p).nodeName);
  const zone = node ? env.nodes?.cache.get(undefined, node)?.metadata.labels?.[ZoneLabel] : undefined;
  const hostname = hostnameFor(p, svc);
  return {
    addresses: [podIPs(p).find((ip) => !ip.includes(':')) ?? podIPs(p)[0]],
    conditions: { ready: spec(svc).publishNotReadyAddresses === true || (serving && !terminating), serving, terminating },
    ...(hostname && { hostname }),
    targetRef: targetRef(p),
    ...(node && { nodeName: node }),
    ...(zone && { zone }),
  };
};

/** Desired endpoints grouped by the ports they resolve to. */
const desired = (env: Env, svc: KubeObject): Map<string, { ports: Obj[]; endpoints: Obj[] }> => {
  const groups = new Map<string, { ports: Obj[]; endpoints: Obj[] }>();
  const ports = arr(spec(svc).ports).map(obj);
  const pods = selectedPods(svc, env.pods.cache).filter((p) => isEndpoint(p, true) && podIPs(p).some((ip) => !ip.includes(':')));
  pods.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  for (const p of pods) {
    const resolved = ports.map((port) => ({ port, number: findPort(p, port) })).filter((x) => x.number !== undefined).map((x) => endpointPort(x.port, x.number!));
    const key = JSON.stringify(resolved);
    if (!groups.has(key)) groups.set(key, { ports: resolved, endpoints: [] });
    groups.get(key)!.endpoints.push(endpointOf(env, svc, p));
  }
  return groups;
};

const labelsFor = (svc: KubeObject): Record<string, string> => {
  const labels: Record<string, string> = { ...svc.metadata.labels, [ServiceNameLabel]: svc.metadata.name!, [ManagedByLabel]: ControllerName };
  if (spec(svc).clusterIP === 'None') labels[HeadlessLabel] = '';
  return labels;
};

const syncSlices = async (env: Env, key: string): Promise<void> => {
  const { namespace, name } = splitKey(key);
  const svc = env.services.cache.get(namespace, name);
  // A deleted Service's slices go with it (the garbage collector, through their owner reference).
  if (!svc || !managesEndpoints(svc) || svc.metadata.deletionTimestamp) return;
  const ctx = inNamespace(namespace);
  const existing = env.slices.cache.ownedBy(svc.metadata.uid!).filter((s) => s.metadata.labels?.[ManagedByLabel] === ControllerName);
  const labels = labelsFor(svc);
  const wanted: { ports: Obj[]; endpoints: Obj[] }[] = [];
  for (const g of desired(env, svc).values()) {
    for (let i = 0; i < g.endpoints.length; i += MaxEndpointsPerSlice) wanted.push({ ports: g.ports, endpoints: g.endpoints.slice(i, i + MaxEndpointsPerSlice) });
  }
  // A Service with no endpoints still has one (empty) slice, as Kubernetes keeps a placeholder.
  if (wanted.length === 0) wanted.push({ ports: [], endpoints: [] });
  const spare = [...existing].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  for (const w of wanted) {
    const reuse = spare.findIndex((s) => semanticEqual(s.ports, w.ports)) ;
    const slice = reuse >= 0 ? spare.splice(reuse, 1)[0] : spare.shift();
    const body: KubeObject = {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice',
      metadata: slice ? { ...slice.metadata, labels } : { generateName: `${name}-`, namespace, labels, ownerReferences: [controllerRef(svc)] },
      addressType: 'IPv4', endpoints: w.endpoints, ports: w.ports,
    };
    if (slice && semanticEqual(slice.endpoints, body.endpoints) && semanticEqual(slice.ports, body.ports) && semanticEqual(slice.metadata.labels, labels)) continue;
    try {
      const { object } = slice ? await env.slices.store.update(ctx, slice.metadata.name!, body) : await env.slices.store.create(ctx, body);
      env.slices.cache.observe(object);
    } catch (err) {
      env.recorder.event(svc, 'Warning', 'FailedToUpdateEndpointSlices', `Error updating Endpoint Slices for Service ${namespace}/${name}: ${errorText(err)}`);
      throw err;
    }
  }
  for (const s of spare) {
    await env.slices.store.delete(ctx, s.metadata.name!, { preconditions: { uid: s.metadata.uid } }).then((w) => env.slices.cache.observeDelete(w.object, w.deleted), ignoreRaces);
  }
};

export const startEndpointSliceController = (ctx: ControllerContext): Controller => {
  const services = served(ctx, '', 'v1', 'services');
  const slices = served(ctx, 'discovery.k8s.io', 'v1', 'endpointslices');
  const pods = served(ctx, '', 'v1', 'pods');
  if (!services || !slices || !pods) return { stop: async () => undefined };
  const env: Env = { services, slices, pods, nodes: served(ctx, '', 'v1', 'nodes'), recorder: ctx.events.recorder('endpoint-slice-controller') };
  const queue = new WorkQueue('endpointslice-controller', (key) => syncSlices(env, key), { log: ctx.log });
  followServicePods(services.cache, pods.cache, (key) => queue.add(key));
  // Slices changed or deleted by someone else are put back.
  slices.cache.on((_, s) => {
    const owner = s.metadata.labels?.[ManagedByLabel] === ControllerName ? s.metadata.labels?.[ServiceNameLabel] : undefined;
    if (owner) queue.add(`${s.metadata.namespace}/${owner}`);
  });
  return keyed(queue, [services.cache, slices.cache, pods.cache, ...(env.nodes ? [env.nodes.cache] : [])]);
};
