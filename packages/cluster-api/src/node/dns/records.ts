/**
 * The cluster's names, as the Kubernetes DNS specification (and CoreDNS's kubernetes plugin) gives
 * them, from the Services and Endpoints the node already watches:
 * - `<svc>.<ns>.svc.<zone>`: a Service's clusterIP; a headless Service's ready endpoint addresses;
 *   an ExternalName Service's CNAME (with the target's records when it is in the zone);
 * - `<hostname>.<svc>.<ns>.svc.<zone>`: an endpoint of a headless Service by its hostname (or its
 *   address written with dashes);
 * - `_<port>._<proto>.<svc>.<ns>.svc.<zone>`: SRV for a named port;
 * - `<a-b-c-d>.<ns>.pod.<zone>`: the address the name spells (the plugin's `pods insecure`);
 * - `<d.c.b.a>.in-addr.arpa`: PTR for a Service's clusterIP.
 * A name of the zone that does not exist is NXDOMAIN; one that exists with no record of the type
 * asked is NOERROR with no answer. Names outside the zone are not ours (the server forwards them).
 */
import { isIPv4 } from 'node:net';
import { addressType, Rcode, RecordType, type Answer } from './wire.js';

export interface DnsPort { name?: string; port: number; protocol?: string }
export interface DnsService { namespace: string; name: string; clusterIP?: string; type?: string; externalName?: string; ports?: readonly DnsPort[] }
export interface DnsEndpoint { ip: string; hostname?: string }

/** What the records are made from (the node's Service and Endpoints informers). */
export interface ClusterView {
  service(namespace: string, name: string): DnsService | undefined;
  /** Ready addresses of the Service's Endpoints. */
  endpoints(namespace: string, name: string): readonly DnsEndpoint[];
  services(): Iterable<DnsService>;
}

export interface Lookup {
  rcode: number;
  answers: Answer[];
}

/** Seconds a cluster answer may be cached (CoreDNS's default for the kubernetes plugin). */
export const ClusterTtl = 5;

const none = (rcode: number): Lookup => ({ rcode, answers: [] });
const headless = (s: DnsService) => s.clusterIP === 'None' || (!s.clusterIP && s.type !== 'ExternalName');
const dashed = (ip: string) => (isIPv4(ip) ? ip.replace(/\./g, '-') : ip.replace(/:/g, '-'));

/** Whether `name` is in the cluster's zone (or is a reverse name), i.e. ours to answer. */
export const inZone = (name: string, zone: string): boolean => name === zone || name.endsWith(`.${zone}`) || name.endsWith('.in-addr.arpa');

export function lookup(view: ClusterView, zone: string, name: string, type: number, depth = 0): Lookup {
  if (name.endsWith('.in-addr.arpa')) return reverse(view, zone, name, type);
  if (depth > 8) return none(Rcode.ServFail);
  const labels = name.slice(0, -(zone.length + 1)).split('.');
  const kind = labels.at(-1);
  if (kind === 'pod' && labels.length === 3) {
    const ip = labels[0]!.replace(/-/g, '.');
    if (!isIPv4(ip)) return none(Rcode.NXDomain);
    return { rcode: Rcode.NoError, answers: type === RecordType.A || type === RecordType.ANY ? [{ type: RecordType.A, name, ttl: ClusterTtl, address: ip }] : [] };
  }
  if (kind !== 'svc') return none(name === zone || labels.length === 1 && ['svc', 'pod'].includes(labels[0]!) ? Rcode.NoError : Rcode.NXDomain);
  // <ns>.svc: a namespace with Services exists as a name.
  if (labels.length === 2) return none([...view.services()].some((s) => s.namespace === labels[0]) ? Rcode.NoError : Rcode.NXDomain);
  if (labels.length === 3) return serviceRecords(view, zone, name, labels[1]!, labels[0]!, type, depth);
  if (labels.length === 4) return endpointRecord(view, name, labels[2]!, labels[1]!, labels[0]!, type);
  if (labels.length === 5 && labels[0]!.startsWith('_') && labels[1]!.startsWith('_')) return srv(view, zone, name, labels[3]!, labels[2]!, labels[0]!.slice(1), labels[1]!.slice(1), type);
  return none(Rcode.NXDomain);
}

function addresses(name: string, ips: readonly string[], type: number): Answer[] {
  return ips.filter((ip) => type === RecordType.ANY || addressType(ip) === type).map((address) => ({ type: addressType(address), name, ttl: ClusterTtl, address }));
}

function serviceRecords(view: ClusterView, zone: string, name: string, ns: string, svcName: string, type: number, depth: number): Lookup {
  const svc = view.service(ns, svcName);
  if (!svc) return none(Rcode.NXDomain);
  if (svc.type === 'ExternalName') {
    if (!svc.externalName) return none(Rcode.NoError);
    const target = svc.externalName.toLowerCase().replace(/\.$/, '');
    const cname: Answer = { type: RecordType.CNAME, name, ttl: ClusterTtl, target };
    // A target in the zone is answered too, as CoreDNS does: a stub resolver does not chase the CNAME itself.
    const chased = target !== name && inZone(target, zone) && !target.endsWith('.in-addr.arpa') ? lookup(view, zone, target, type, depth + 1) : undefined;
    return { rcode: Rcode.NoError, answers: [cname, ...(chased?.rcode === Rcode.NoError ? chased.answers : [])] };
  }
  if (type === RecordType.SRV) return srvAll(view, zone, name, svc);
  const ips = headless(svc) ? view.endpoints(ns, svcName).map((e) => e.ip) : [svc.clusterIP!];
  return { rcode: Rcode.NoError, answers: addresses(name, ips, type) };
}

function endpointRecord(view: ClusterView, name: string, ns: string, svcName: string, host: string, type: number): Lookup {
  const svc = view.service(ns, svcName);
  if (!svc || !headless(svc)) return none(Rcode.NXDomain);
  const found = view.endpoints(ns, svcName).filter((e) => (e.hostname ?? dashed(e.ip)) === host);
  if (found.length === 0) return none(Rcode.NXDomain);
  return { rcode: Rcode.NoError, answers: addresses(name, found.map((e) => e.ip), type) };
}

function srvAll(view: ClusterView, zone: string, name: string, svc: DnsService): Lookup {
  const target = `${svc.name}.${svc.namespace}.svc.${zone}`;
  const answers: Answer[] = (svc.ports ?? []).map((p) => ({ type: RecordType.SRV, name, ttl: ClusterTtl, priority: 0, weight: 100, port: p.port, target }));
  return { rcode: Rcode.NoError, answers };
}

function srv(view: ClusterView, zone: string, name: string, ns: string, svcName: string, port: string, proto: string, type: number): Lookup {
  const svc = view.service(ns, svcName);
  const p = svc?.ports?.find((x) => x.name === port && (x.protocol ?? 'TCP').toLowerCase() === proto);
  if (!svc || !p) return none(Rcode.NXDomain);
  if (type !== RecordType.SRV && type !== RecordType.ANY) return none(Rcode.NoError);
  return { rcode: Rcode.NoError, answers: [{ type: RecordType.SRV, name, ttl: ClusterTtl, priority: 0, weight: 100, port: p.port, target: `${svc.name}.${svc.namespace}.svc.${zone}` }] };
}

/** PTR for a Service's clusterIP; any other reverse name is not ours (undefined rcode: forward it). */
function reverse(view: ClusterView, zone: string, name: string, type: number): Lookup {
  const octets = name.slice(0, -'.in-addr.arpa'.length).split('.');
  const ip = octets.reverse().join('.');
  const svc = isIPv4(ip) ? [...view.services()].find((s) => s.clusterIP === ip) : undefined;
  if (!svc) return none(-1);
  if (type !== RecordType.PTR && type !== RecordType.ANY) return none(Rcode.NoError);
  return { rcode: Rcode.NoError, answers: [{ type: RecordType.PTR, name, ttl: ClusterTtl, target: `${svc.name}.${svc.namespace}.svc.${zone}` }] };
}
