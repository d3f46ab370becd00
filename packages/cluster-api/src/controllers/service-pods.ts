/**
 * What the endpoints and EndpointSlice controllers share (endpointslice/util, podutil.FindPort): the
 * pods a Service selects, which of them are endpoints (an IP, not finished; terminating ones only
 * where asked), the port a service port reaches on a pod (a number, or a container port by name and
 * protocol), the hostname a pod publishes under a headless Service, and the wiring that wakes a
 * Service's key when it or a pod it selects (before or after the change) changes.
 */
import type { KubeObject } from '../api/meta.js';
import { arr, obj, spec, str, type Obj } from '../registry/kinds/common.js';
import type { ObjectCache } from './cache.js';
import { objectKey } from './context.js';
import { isTerminal } from './pods.js';

export const selectorOf = (svc: KubeObject): Record<string, string> | undefined => {
  const s = spec(svc).selector;
  return s && typeof s === 'object' ? (s as Record<string, string>) : undefined;
};

/** A Service whose endpoints the controllers write: with a selector, not ExternalName. */
export const managesEndpoints = (svc: KubeObject): boolean => spec(svc).type !== 'ExternalName' && selectorOf(svc) !== undefined;

const selects = (selector: Record<string, string>, labels: Record<string, string> | undefined): boolean =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

export const selectedPods = (svc: KubeObject, pods: ObjectCache): KubeObject[] => {
  const selector = selectorOf(svc);
  if (!selector) return [];
  return pods.list(svc.metadata.namespace).filter((p) => selects(selector, p.metadata.labels));
};

export const podIPs = (p: KubeObject): string[] => {
  const st = obj(p.status);
  const ips = arr(st.podIPs).map((x) => str(obj(x).ip)).filter(Boolean);
  return ips.length ? ips : str(st.podIP) ? [str(st.podIP)] : [];
};

/** ShouldPodBeInEndpoints. */
export const isEndpoint = (p: KubeObject, includeTerminating: boolean): boolean =>
  !isTerminal(p) && podIPs(p).length > 0 && (includeTerminating || !p.metadata.deletionTimestamp);

/** ShouldSetHostname: a pod's hostname, when its subdomain is the Service's name. */
export const hostnameFor = (p: KubeObject, svc: KubeObject): string | undefined => {
  const s = spec(p);
  return str(s.hostname) && s.subdomain === svc.metadata.name && p.metadata.namespace === svc.metadata.namespace ? str(s.hostname) : undefined;
};

/** podutil.FindPort: the pod port a service port targets, or undefined when a named port is not there. */
export const findPort = (p: KubeObject, port: Obj): number | undefined => {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number' && target > 0) return target;
  if (typeof target === 'string' && /^\d+$/.test(target)) return Number(target);
  const protocol = str(port.protocol) || 'TCP';
  for (const c of arr(spec(p).containers).map(obj)) {
    for (const cp of arr(c.ports).map(obj)) if (cp.name === target && (str(cp.protocol) || 'TCP') === protocol) return Number(cp.containerPort);
  }
  return undefined;
};

/** The endpoint port of a service port (endpointPortFromServicePort). */
export const endpointPort = (port: Obj, number: number): Obj => ({
  ...(str(port.name) !== undefined && { name: str(port.name) }),
  port: number,
  protocol: str(port.protocol) || 'TCP',
  ...(port.appProtocol !== undefined && { appProtocol: port.appProtocol }),
});

export const targetRef = (p: KubeObject): Obj => ({ kind: 'Pod', namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid });

/** Wakes a Service when it changes, and when a pod its selector matches (before or after the change) changes. */
export const followServicePods = (services: ObjectCache, pods: ObjectCache, add: (key: string) => void): void => {
  services.on((_, svc) => add(objectKey(svc)));
  pods.on((_, pod, old) => {
    for (const svc of services.list(pod.metadata.namespace)) {
      const selector = selectorOf(svc);
      if (selector && (selects(selector, pod.metadata.labels) || (old && selects(selector, old.metadata.labels)))) add(objectKey(svc));
    }
  });
};
