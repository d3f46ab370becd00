/**
 * The node's service proxy (kube-proxy's old userspace mode): for each Service whose clusterIP is a
 * loopback address (serve's --service-cluster-ip-range, bindable on Linux with no setup) a TCP server
 * on `clusterIP:port` for each TCP port, and on `hostIP:nodePort` for NodePort and LoadBalancer
 * Services, each connection forwarded to one of the Service's ready endpoints in turn. A node whose
 * pods have network namespaces of their own (the oci runtime) cannot let them reach loopback
 * addresses: its clusterIPs are private addresses, each made an address of the host (`addresses`)
 * before it is listened on, so a pod reaches `clusterIP:port` through its default route. The endpoints
 * are read from the Endpoints informer's cache when a connection comes in, so a pod that stops being
 * ready is no longer chosen as soon as the Endpoints controller has moved it to notReadyAddresses.
 * An established connection stays with its pod, as kube-proxy's conntrack keeps it: a draining
 * function answers `Connection: close` (the runtime does), and its kept-alive clients come back on a
 * new connection, to a ready pod. Closing "idle" connections here instead would race a client's next
 * request on them.
 */
import { connect, createServer, isIPv4, type Server, type Socket } from 'node:net';
import { Informer, type KubeClient, Resources, type KubeObject } from '@func/kube-client';
import type { ClusterView, DnsService } from './dns/records.js';

interface ServicePort { name?: string; port: number; protocol?: string; nodePort?: number }
type Service = KubeObject & { spec?: { clusterIP?: string; type?: string; externalName?: string; ports?: ServicePort[] } };
interface EndpointAddress { ip: string; hostname?: string; nodeName?: string; targetRef?: { uid?: string } }
type Endpoints = KubeObject & { subsets?: { addresses?: EndpointAddress[]; ports?: { name?: string; port: number; protocol?: string }[] }[] };

export interface ServiceProxyOptions {
  kube: KubeClient;
  nodeName: string;
  /** Where NodePorts are opened (the node's InternalIP). */
  hostIP: string;
  /** Where a connection to `ip:port` of a pod of this node really goes (the pod network's mapping). */
  target(uid: string, port: number): { host: string; port: number } | undefined;
  log: (entry: Record<string, unknown>) => void;
  /** A clusterIP the node answers on itself (the cluster DNS's): not proxied. */
  served?: string;
  /** Makes a clusterIP outside loopback an address of this host (oci/service-addresses.ts); without it only loopback clusterIPs are served. */
  addresses?: { add(ip: string): Promise<void>; remove(ip: string): Promise<void> };
}

/** One listening address of one Service port. */
interface Listener { service: string; port: ServicePort; server: Server; next: number }

const quiet = () => undefined;
const keyOf = (o: KubeObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
const isLoopback = (ip: string | undefined): ip is string => !!ip && isIPv4(ip) && ip.startsWith('127.');
const isTcp = (p: { protocol?: string }) => (p.protocol ?? 'TCP') === 'TCP';

/** The addresses a Service should be reachable at, each with the port it stands for. */
function wanted(svc: Service, hostIP: string, anyIPv4: boolean): Map<string, ServicePort> {
  const out = new Map<string, ServicePort>();
  const { clusterIP, type, ports = [] } = svc.spec ?? {};
  if (!(isLoopback(clusterIP) || (anyIPv4 && clusterIP && isIPv4(clusterIP))) || type === 'ExternalName') return out;
  for (const p of ports.filter(isTcp)) {
    out.set(`${clusterIP}:${p.port}`, p);
    if ((type === 'NodePort' || type === 'LoadBalancer') && p.nodePort) out.set(`${hostIP}:${p.nodePort}`, p);
  }
  return out;
}

export class ServiceProxy {
  private readonly listeners = new Map<string, Listener>();
  private readonly sockets = new Set<Socket>();
  private services?: Informer<Service>;
  private endpoints?: Informer<Endpoints>;
  private stopped = false;
  /** Whether the Services have been listed once (the kubelet builds no service environment before). */
  servicesSynced = false;

  constructor(private readonly opts: ServiceProxyOptions) {}

  /** Starts the informers; resolves once both have listed. */
  async start(): Promise<void> {
    const { kube } = this.opts;
    this.endpoints = new Informer<Endpoints>(kube, Resources.endpoints, { namespace: '', onError: quiet }).start();
    this.services = new Informer<Service>(kube, Resources.services, { namespace: '', onError: quiet, indexers: { namespace: (s) => [s.metadata?.namespace ?? ''] } })
      .on('add', (s) => this.sync(s)).on('update', (s) => this.sync(s)).on('delete', (s) => this.sync(s, true)).start();
    void this.services.synced.then(() => (this.servicesSynced = true));
    await Promise.all([this.endpoints.synced, this.services.synced]);
  }

  /** Opens what the Service needs that is not open yet, closes what it no longer needs. */
  private sync(svc: Service, deleted = false): void {
    const service = keyOf(svc);
    const want = deleted || (this.opts.served && svc.spec?.clusterIP === this.opts.served) ? new Map<string, ServicePort>() : wanted(svc, this.opts.hostIP, !!this.opts.addresses);
    for (const [address, l] of this.listeners) {
      if (l.service !== service) continue;
      const port = want.get(address);
      if (port) l.port = port;
      else this.close(address);
    }
    if (this.stopped) return;
    for (const [address, port] of want) if (!this.listeners.has(address)) this.listen(service, address, port);
  }

  private listen(service: string, address: string, port: ServicePort): void {
    const at = address.lastIndexOf(':');
    const server = createServer({ allowHalfOpen: true }, (client) => this.forward(listener, client));
    const listener: Listener = { service, port, server, next: 0 };
    this.listeners.set(address, listener);
    const ip = address.slice(0, at);
    server.on('error', (err: NodeJS.ErrnoException) => {
      if (this.listeners.get(address) === listener) this.listeners.delete(address);
      this.release(ip);
      this.opts.log({ level: 'warn', msg: 'service proxy cannot listen', service, address, code: err.code ?? 'error' });
    });
    const own = this.ownAddress(ip);
    if (!own) return void server.listen(Number(address.slice(at + 1)), ip);
    own.add(ip).then(() => {
      if (this.listeners.get(address) === listener) server.listen(Number(address.slice(at + 1)), ip);
      else this.release(ip);
    }, (err: Error) => {
      if (this.listeners.get(address) === listener) this.listeners.delete(address);
      this.opts.log({ level: 'warn', msg: 'service proxy cannot add the clusterIP to the host', service, address, error: err.message });
    });
  }

  /** Who makes `ip` an address of the host, when it is not one already (a loopback address, the node's own). */
  private ownAddress(ip: string) {
    return isLoopback(ip) || ip === this.opts.hostIP ? undefined : this.opts.addresses;
  }

  private close(address: string): void {
    this.listeners.get(address)?.server.close();
    this.listeners.delete(address);
    this.release(address.slice(0, address.lastIndexOf(':')));
  }

  /** A clusterIP no listener uses any more stops being an address of the host. */
  private release(ip: string): void {
    const own = this.ownAddress(ip);
    if (!own || [...this.listeners.keys()].some((a) => a.slice(0, a.lastIndexOf(':')) === ip)) return;
    void own.remove(ip);
  }

  /** The Service port's ready endpoints: the endpoint port of the same name, or a subset's only one. */
  private ready(l: Listener): { host: string; port: number }[] {
    const [namespace, name] = l.service.split('/') as [string, string];
    const out: { host: string; port: number }[] = [];
    for (const subset of this.endpoints?.get(name, namespace)?.subsets ?? []) {
      const ports = (subset.ports ?? []).filter(isTcp);
      const port = ports.find((p) => (p.name ?? '') === (l.port.name ?? '')) ?? (ports.length === 1 ? ports[0] : undefined);
      if (!port) continue;
      for (const a of subset.addresses ?? []) {
        const local = a.nodeName === this.opts.nodeName && a.targetRef?.uid ? this.opts.target(a.targetRef.uid, port.port) : undefined;
        out.push(local ?? { host: a.ip, port: port.port });
      }
    }
    return out;
  }

  /** Round robin over the ready endpoints, trying the next one when a connect fails; none ready: the client is refused. */
  private forward(l: Listener, client: Socket, tries = 0): void {
    if (tries === 0) this.track(client).on('error', quiet);
    const targets = this.ready(l);
    if (client.destroyed) return;
    if (tries >= targets.length) return void client.resetAndDestroy();
    const target = targets[l.next++ % targets.length]!;
    const upstream = this.track(connect({ port: target.port, host: target.host, allowHalfOpen: true }));
    const cut = () => upstream.destroy();
    client.once('close', cut);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      upstream.once('close', () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    upstream.on('error', () => {
      if (connected) return void client.destroy();
      client.off('close', cut);
      this.forward(l, client, tries + 1);
    });
  }

  private track(socket: Socket): Socket {
    this.sockets.add(socket);
    return socket.once('close', () => this.sockets.delete(socket));
  }

  /** A Service's clusterIP and first port, once the informer has it (the `kubernetes` Service's for pods' environment). */
  clusterAddress(namespace: string, name: string): { ip: string; port: number } | undefined {
    const spec = this.services?.get(name, namespace)?.spec;
    const port = spec?.ports?.[0]?.port;
    return spec?.clusterIP && isIPv4(spec.clusterIP) && port ? { ip: spec.clusterIP, port } : undefined;
  }

  /** The Services of `namespace` as the informer has them (the pods' service environment). */
  namespaceServices(namespace: string): { namespace: string; name: string; clusterIP?: string; ports?: ServicePort[] }[] {
    return (this.services?.byIndex('namespace', namespace) ?? []).map((s) => ({ namespace, name: s.metadata?.name ?? '', clusterIP: s.spec?.clusterIP, ports: s.spec?.ports }));
  }

  /** The Services and their ready endpoints as the cluster DNS reads them (dns/records.ts). */
  dnsView(): ClusterView {
    const view = (s: Service): DnsService => ({ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '', clusterIP: s.spec?.clusterIP, type: s.spec?.type, externalName: s.spec?.externalName, ports: s.spec?.ports });
    return {
      service: (namespace, name) => {
        const s = this.services?.get(name, namespace);
        return s && view(s);
      },
      endpoints: (namespace, name) => (this.endpoints?.get(name, namespace)?.subsets ?? []).flatMap((sub) => (sub.addresses ?? []).map((a) => ({ ip: a.ip, ...(a.hostname && { hostname: a.hostname }) }))),
      services: () => (this.services?.list() ?? []).map(view),
    };
  }

  /** The addresses listened on now (tests, and the agent's own checks). */
  addresses(): string[] {
    return [...this.listeners.entries()].filter(([, l]) => l.server.listening).map(([a]) => a);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.services?.stop(), this.endpoints?.stop()]);
    for (const address of [...this.listeners.keys()]) this.close(address);
    for (const s of this.sockets) s.destroy();
  }
}
