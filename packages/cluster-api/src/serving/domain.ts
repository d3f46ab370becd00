/**
 * Route URLs as Knative's networking config makes them: the domain from the `config-domain`
 * ConfigMap in `knative-serving` (each key a domain; its value empty for the default, or
 * `selector:` labels a Route must carry, the most specific match winning), put into the template
 * `{{.Name}}.{{.Namespace}}.{{.Domain}}`; a Route labelled
 * `networking.knative.dev/visibility: cluster-local` gets its cluster-local name instead, and each
 * tag its own host, `<tag>-<name>.<ns>.<domain>`.
 *
 * With no ConfigMap the domain is `localhost`: every name under `.localhost` is the loopback
 * address (RFC 6761), which curl, browsers and systemd's resolver answer with no DNS set up, so
 * `http://hello.default.localhost:<gateway port>/` reaches the gateway from this machine as is
 * (Knative's own default, `svc.cluster.local`, resolves only inside a cluster; `sslip.io` needs
 * the internet).
 */
import { parse } from 'yaml';
import type { KubeObject } from '../api/meta.js';
import { Kinds, Label, ServingGroup } from './kinds.js';

export const DefaultDomain = 'localhost';
export const DomainConfigMap = { namespace: 'knative-serving', name: 'config-domain' } as const;

type Selector = Record<string, string>;

const selectorOf = (value: string): Selector | undefined => {
  if (value.trim() === '') return {};
  try {
    const parsed = parse(value) as { selector?: unknown } | null;
    const sel = parsed?.selector;
    if (sel && typeof sel === 'object' && !Array.isArray(sel)) return Object.fromEntries(Object.entries(sel).map(([k, v]) => [k, String(v)]));
  } catch {
    /* a value that is not YAML names no domain */
  }
  return undefined;
};

/** The domain for a Route with `labels` under the config-domain ConfigMap's `data` (absent: the default). */
export function domainFor(labels: Record<string, string>, data: Record<string, string> | undefined): string {
  let best: { domain: string; specificity: number } | undefined;
  for (const [domain, value] of Object.entries(data ?? {})) {
    if (domain.startsWith('_')) continue;
    const sel = selectorOf(value);
    if (!sel || !Object.entries(sel).every(([k, v]) => labels[k] === v)) continue;
    const specificity = Object.keys(sel).length;
    if (!best || specificity > best.specificity) best = { domain, specificity };
  }
  return best?.domain ?? DefaultDomain;
}

/** `<name>.<ns>.svc.cluster.local`: the Route's address inside the cluster. */
export const clusterLocalHost = (name: string, namespace: string): string => `${name}.${namespace}.svc.cluster.local`;

/** The Route's host (its URL's), for `tag` when given. */
export function routeHost(route: KubeObject, domain: string, tag?: string): string {
  const name = tag ? `${tag}-${route.metadata.name}` : route.metadata.name!;
  const ns = route.metadata.namespace ?? 'default';
  if (route.metadata.labels?.[Label.visibility] === 'cluster-local') return clusterLocalHost(name, ns);
  return `${name}.${ns}.${domain}`;
}

/** The Route a DomainMapping's ref reaches (a Knative Service's is of its name), or why none. */
export function referencedRoute(dm: { metadata?: { namespace?: string }; spec?: { ref?: { apiVersion?: string; kind?: string; name?: string; namespace?: string } } }): { route: string } | { message: string } {
  const ref = dm.spec?.ref ?? {};
  const group = String(ref.apiVersion ?? '').split('/')[0];
  if (group !== ServingGroup || (ref.kind !== Kinds.services.kind && ref.kind !== Kinds.routes.kind) || !ref.name)
    return { message: `ref must name a ${ServingGroup} Service or Route, not ${JSON.stringify(`${ref.apiVersion ?? ''} ${ref.kind ?? ''}`.trim())}` };
  if (ref.namespace && ref.namespace !== dm.metadata?.namespace) return { message: `ref namespace ${JSON.stringify(ref.namespace)} must be the DomainMapping's` };
  return { route: ref.name };
}
