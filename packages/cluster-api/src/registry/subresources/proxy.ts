/**
 * pods/proxy and services/proxy: HTTP (and upgrades) forwarded to a pod's port through the pod
 * network, as kube-apiserver's ProxyREST does. The path's name segment is `[scheme:]name[:port]`
 * (utilnet.SplitSchemeNamePort); everything after `proxy` is the backend path. Where the request goes
 * is decided here (pod.ResourceLocation, the service REST's ResourceLocation over Endpoints); how it
 * goes is streaming/http-proxy.ts.
 */
import { createConnection, isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import type { KubeObject } from '../../api/meta.js';
import { backendUnavailable, badRequest } from '../../api/errors.js';
import { proxyHttp, type ProxyTarget } from '../../streaming/http-proxy.js';
import { backendPath } from '../../streaming/proxy-headers.js';
import type { PodNetwork, Services } from '../definition.js';
import type { ConnectBehaviour, ConnectHandler, ConnectRequest, SubresourceDef } from '../subresource.js';
import { arr, obj, spec, status, str } from '../kinds/common.js';

export interface SchemeNamePort {
  scheme: 'http' | 'https';
  name: string;
  port: string;
}

/** `name`, `name:port` or `scheme:name:port` with scheme http, https or empty; undefined when malformed. */
export function splitSchemeNamePort(id: string): SchemeNamePort | undefined {
  const parts = id.split(':');
  if (parts.length > 3) return undefined;
  const [scheme, name, port] = parts.length === 3 ? parts : ['', parts[0]!, parts[1] ?? ''];
  if (!name || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme: scheme === 'https' ? 'https' : 'http', name, port: port! };
}

const objectName = (what: 'pod' | 'service') => (id: string): string => {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid ${what} request "${id}"`);
  return parsed.name;
};

const hostPort = (ip: string, port: number): string => (ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`);

const noRoute = (): Error => Object.assign(new Error('no pod network'), { code: 'EHOSTUNREACH' });

/** A connection to `pod:port` through the pod network; without one there is no route to any pod. */
const dialer = (network: PodNetwork | undefined, pod: KubeObject, port: number) => () =>
  network ? network.dial(pod, port) : Promise.reject(noRoute());

/** Hands the exchange to the HTTP proxy, the backend path and the proxy prefix taken from the request as sent. */
function proxyTo(request: ConnectRequest, target: Pick<ProxyTarget, 'dial' | 'scheme' | 'backendHost'>): ConnectHandler {
  return (req, res, upgrade) => {
    const rawPath = (req.url ?? '/').split('?', 1)[0]!;
    const prefix = rawPath.slice(0, rawPath.length - request.subpath.length);
    const segments = request.subpath === '' ? [] : request.subpath.slice(1).split('/').map(decode);
    return proxyHttp(req, res, { ...target, path: backendPath(segments), prefix }, upgrade && (() => upgrade.take()));
  };
}

const decode = (segment: string): string => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** A pod port named or numbered; no port: the first declared one, else the scheme's (kube-apiserver dials the bare IP). */
function podPort(pod: KubeObject, port: string, scheme: SchemeNamePort['scheme']): number {
  const ports = arr(spec(pod).containers).flatMap((c) => arr(obj(c).ports).map(obj));
  if (port === '') return Number(ports[0]?.containerPort) || (scheme === 'https' ? 443 : 80);
  const number = /^\d{1,5}$/.test(port) ? Number(port) : Number(ports.find((p) => str(p.name) === port)?.containerPort);
  if (number >= 1 && number <= 65535) return number;
  throw backendUnavailable(`error trying to reach service: unknown port "${port}"`);
}

/** A proxy subresource: kube-apiserver's verbs and options kind, a `[scheme:]name[:port]` name, a path after it. */
const proxy = (what: 'pod' | 'service', kind: string, connect: ConnectBehaviour['connect']): SubresourceDef => ({
  verbs: ['create', 'delete', 'get', 'patch', 'update'],
  kind: { group: '', version: 'v1', kind },
  behaviour: { type: 'connect', objectName: objectName(what), takesPath: true, connect },
});

export const podProxy = proxy('pod', 'PodProxyOptions', (pod, request, services) => {
  const { scheme, port } = splitSchemeNamePort(request.id)!;
  const ip = str(status(pod).podIP);
  // kube-apiserver proxies only to an address it can name as the pod's.
  if (!isIP(ip)) throw badRequest('address not allowed');
  const number = podPort(pod, port, scheme);
  return proxyTo(request, { dial: dialer(services.podNetwork, pod, number), scheme, backendHost: hostPort(ip, number) });
});

export const serviceProxy = proxy('service', 'ServiceProxyOptions', async (service, request, services) => {
  const { scheme, name, port } = splitSchemeNamePort(request.id)!;
  const endpoint = await pickEndpoint(service, servicePortName(service, name, port), { namespace: request.namespace, id: request.id }, services);
  return proxyTo(request, { dial: endpoint.dial, scheme, backendHost: hostPort(endpoint.ip, endpoint.port) });
});

/** A port number names the service port that has it; a name (or nothing) is the port's name already. */
export function servicePortName(service: KubeObject, name: string, port: string): string {
  if (!/^\d+$/.test(port)) return port;
  const found = arr(spec(service).ports).map(obj).find((p) => Number(p.port) === Number(port));
  if (!found) throw backendUnavailable(`no service port ${port} found for service "${name}"`);
  return str(found.name);
}

export interface Endpoint {
  ip: string;
  port: number;
  /** A connection to it: through the pod network to a pod, else (`anyAddress`) over TCP. */
  dial(): Promise<Duplex>;
}

export interface EndpointQuery {
  namespace: string | undefined;
  /** How the service is named in the 503 when no endpoint is found. */
  id: string;
  /**
   * kube-aggregator's ResolveEndpoint takes any ready address of the Endpoints; services/proxy only
   * one that is a pod of the namespace with that IP (kube-apiserver's isValidAddress).
   */
  anyAddress?: boolean;
}

const rotated = <T>(items: readonly T[]): T[] => {
  const start = Math.floor(Math.random() * items.length);
  return [...items.slice(start), ...items.slice(0, start)];
};

/**
 * The service REST's ResourceLocation: a random subset with the port, a random address in it whose
 * target is a pod of this namespace that has that IP (kube-apiserver's isValidAddress).
 */
export async function pickEndpoint(service: KubeObject, portName: string, query: EndpointQuery, services: Services): Promise<Endpoint> {
  const name = service.metadata.name ?? '';
  const endpoints = services.find('', 'v1', 'endpoints');
  const noEndpoints = (which: string) => backendUnavailable(`no endpoints available for service "${which}"`);
  if (!endpoints) throw noEndpoints(name);
  const ctx = { namespace: query.namespace };
  const subsets = arr((await endpoints.get(ctx, name)).subsets).map(obj);
  if (subsets.length === 0) throw noEndpoints(name);
  for (const subset of rotated(subsets)) {
    const port = arr(subset.ports).map(obj).find((p) => str(p.name) === portName);
    if (!port) continue;
    const number = Number(port.port);
    for (const address of rotated(arr(subset.addresses).map(obj))) {
      const ip = str(address.ip);
      const pod = await addressPod(address, query.namespace, services);
      if (pod) return { ip, port: number, dial: dialer(services.podNetwork, pod, number) };
      if (query.anyAddress && isIP(ip)) return { ip, port: number, dial: () => tcpDial(ip, number) };
    }
  }
  throw noEndpoints(query.id);
}

const tcpDial = (host: string, port: number): Promise<Duplex> =>
  new Promise((resolve, reject) => {
    const socket = createConnection({ host, port, allowHalfOpen: true });
    socket.once('connect', () => (socket.off('error', reject), resolve(socket)));
    socket.once('error', reject);
  });

async function addressPod(address: Record<string, unknown>, namespace: string | undefined, services: Services): Promise<KubeObject | undefined> {
  const ref = obj(address.targetRef);
  if (!ref.name || str(ref.namespace) !== namespace) return undefined;
  const pod = await services.find('', 'v1', 'pods')?.get({ namespace }, str(ref.name)).catch(() => undefined);
  if (!pod) return undefined;
  const ips = [str(status(pod).podIP), ...arr(status(pod).podIPs).map((p) => str(obj(p).ip))];
  return ips.includes(str(address.ip)) ? pod : undefined;
}
