/**
 * A pod's /etc/resolv.conf as the kubelet writes it (pkg/kubelet/network/dns): by `dnsPolicy` —
 * `ClusterFirst` (the default): the cluster DNS, the searches `<ns>.svc.<zone> svc.<zone> <zone>`
 * then the host's, `options ndots:5`; a hostNetwork pod's `ClusterFirst` is the host's
 * (`ClusterFirstWithHostNet` is the cluster's); `Default`: the host's file; `None`: nothing but
 * `dnsConfig` — then `dnsConfig`'s nameservers and searches appended (duplicates dropped) and its
 * options merged by name. With no cluster DNS, `ClusterFirst` falls back to the host's (the kubelet's
 * MissingClusterDNS).
 */
import type { Pod } from '../types.js';

export interface ResolvConf { nameservers: string[]; searches: string[]; options: string[] }

type DnsConfig = { nameservers?: string[]; searches?: string[]; options?: { name: string; value?: string }[] };
type DnsPod = Pod & { spec: { dnsPolicy?: string; dnsConfig?: DnsConfig; hostNetwork?: boolean } };

/** Parses a resolv.conf (nameserver, search/domain, options lines). */
export function parseResolvConf(text: string): ResolvConf {
  const out: ResolvConf = { nameservers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const [key, ...rest] = line.replace(/[#;].*$/, '').trim().split(/\s+/);
    if (key === 'nameserver' && rest[0]) out.nameservers.push(rest[0]);
    else if (key === 'search' || key === 'domain') out.searches = rest.filter(Boolean);
    else if (key === 'options') out.options.push(...rest.filter(Boolean));
  }
  return out;
}

const unique = (xs: string[]) => [...new Set(xs)];

/** `options` merged by name, later ones winning (`ndots:2` replaces `ndots:5`). */
function mergeOptions(base: string[], more: { name: string; value?: string }[]): string[] {
  const byName = new Map(base.map((o) => [o.split(':')[0]!, o]));
  for (const o of more) byName.set(o.name, o.value !== undefined ? `${o.name}:${o.value}` : o.name);
  return [...byName.values()];
}

/** Whether the pod gets the cluster's DNS (else the host's), given that there is one. */
export function usesClusterDns(pod: DnsPod): boolean {
  const policy = pod.spec.dnsPolicy ?? 'ClusterFirst';
  return policy === 'ClusterFirstWithHostNet' || (policy === 'ClusterFirst' && !pod.spec.hostNetwork);
}

export function podResolvConf(pod: DnsPod, clusterDns: string | undefined, zone: string, host: ResolvConf): ResolvConf {
  const policy = pod.spec.dnsPolicy ?? 'ClusterFirst';
  const namespace = pod.metadata.namespace ?? 'default';
  let conf: ResolvConf;
  if (policy === 'None') conf = { nameservers: [], searches: [], options: [] };
  else if (clusterDns && usesClusterDns(pod)) conf = { nameservers: [clusterDns], searches: unique([`${namespace}.svc.${zone}`, `svc.${zone}`, zone, ...host.searches]), options: ['ndots:5'] };
  else conf = { nameservers: [...host.nameservers], searches: [...host.searches], options: [...host.options] };
  const extra = pod.spec.dnsConfig ?? {};
  return {
    nameservers: unique([...conf.nameservers, ...(extra.nameservers ?? [])]).slice(0, 3),
    searches: unique([...conf.searches, ...(extra.searches ?? [])]).slice(0, 32),
    options: mergeOptions(conf.options, extra.options ?? []),
  };
}

export function formatResolvConf(c: ResolvConf): string {
  return [
    ...c.nameservers.map((n) => `nameserver ${n}`),
    ...(c.searches.length ? [`search ${c.searches.join(' ')}`] : []),
    ...(c.options.length ? [`options ${c.options.join(' ')}`] : []),
  ].join('\n') + '\n';
}
