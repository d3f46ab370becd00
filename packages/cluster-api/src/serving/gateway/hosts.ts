/**
 * The gateway's routing table: which Route (and tag) a Host names, from the Routes' status as the
 * route controller writes it — `status.url` and each tagged target's `url`, and the cluster-local
 * `status.address.url` (with its `.svc` and `<name>.<ns>` short forms, as cluster DNS answers them)
 * — and each ready DomainMapping's domain, to the Route its ref reaches; and which revision a request goes to: a tag's own, or a weighted choice per request over the
 * targets with a percent.
 */
import type { KubeObject } from '@func/kube-client';
import { referencedRoute } from '../domain.js';

export interface TrafficTarget { revisionName?: string; percent?: number; tag?: string; url?: string; latestRevision?: boolean }
export type Route = KubeObject & { status?: { url?: string; address?: { url?: string }; traffic?: TrafficTarget[] } };

export interface HostEntry { namespace: string; route: string; tag?: string }

/** The host of a URL, lower case, no port; undefined for what is not an absolute URL. */
const hostOf = (url: string | undefined): string | undefined => {
  if (!url) return undefined;
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
};

/** A request's Host header as the table keys it: lower case, without a port or a trailing dot. */
export const requestHost = (header: string | undefined): string | undefined => {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  const bare = h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.replace(/:\d+$/, '');
  return bare.replace(/\.$/, '') || undefined;
};

/** The hosts one Route answers on. */
export function hostsOf(route: Route): Map<string, HostEntry> {
  const out = new Map<string, HostEntry>();
  const namespace = route.metadata?.namespace ?? 'default';
  const name = route.metadata?.name ?? '';
  const entry = (tag?: string): HostEntry => ({ namespace, route: name, ...(tag && { tag }) });
  const main = hostOf(route.status?.url);
  if (main) out.set(main, entry());
  const local = hostOf(route.status?.address?.url);
  if (local) {
    out.set(local, entry());
    const short = local.replace(/\.svc\.cluster\.local$/, '');
    out.set(`${short}.svc`, entry());
    out.set(short, entry());
  }
  for (const t of route.status?.traffic ?? []) {
    const h = t.tag && hostOf(t.url);
    if (h) out.set(h, entry(t.tag));
  }
  return out;
}

export type DomainMapping = KubeObject & { spec?: { ref?: { apiVersion?: string; kind?: string; name?: string } }; status?: { conditions?: { type: string; status: string }[] } };

/** The host a DomainMapping adds once its ingress is ready (its domain claimed and ref resolved). */
export function mappedHost(dm: DomainMapping): [string, HostEntry] | undefined {
  if (!(dm.status?.conditions ?? []).some((c) => c.type === 'IngressReady' && c.status === 'True')) return undefined;
  const target = referencedRoute(dm);
  if (!('route' in target) || !dm.metadata?.name) return undefined;
  return [dm.metadata.name.toLowerCase(), { namespace: dm.metadata.namespace ?? 'default', route: target.route }];
}

/** The revision a request to `route` (through `tag`) goes to; `random` in [0, 1). */
export function pickRevision(route: Route, tag: string | undefined, random: number): string | undefined {
  const traffic = route.status?.traffic ?? [];
  if (tag) return traffic.find((t) => t.tag === tag)?.revisionName;
  const weighted = traffic.filter((t) => (t.percent ?? 0) > 0 && t.revisionName);
  const total = weighted.reduce((n, t) => n + t.percent!, 0);
  let at = random * total;
  for (const t of weighted) {
    at -= t.percent!;
    if (at < 0) return t.revisionName;
  }
  return weighted.at(-1)?.revisionName;
}
