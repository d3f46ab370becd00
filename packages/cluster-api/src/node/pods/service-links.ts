/**
 * The kubelet's service environment (pkg/kubelet/envvars FromServices): for each Service with a
 * clusterIP, `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT` (its first port), `<NAME>_SERVICE_PORT_<PORT
 * NAME>` for each named port, and the Docker-link forms `<NAME>_PORT` and `<NAME>_PORT_<port>_<PROTO>`
 * with `_PROTO`, `_PORT` and `_ADDR`; names upper case, `-` as `_`. Which Services: the `kubernetes`
 * Service of `default` always, and every other Service of the pod's namespace unless the pod says
 * `enableServiceLinks: false` (getServiceEnvVarMap). A container's own `env` and `envFrom` win over them.
 */
import { isIPv6 } from 'node:net';

export interface LinkedPort { name?: string; port: number; protocol?: string }
export interface LinkedService { namespace: string; name: string; clusterIP?: string; ports?: readonly LinkedPort[] }

const envName = (s: string): string => s.toUpperCase().replace(/-/g, '_');
const hasIP = (s: LinkedService): boolean => !!s.clusterIP && s.clusterIP !== 'None';

/** The variables one Service gives. */
export function serviceVariables(service: LinkedService): Record<string, string> {
  const ports = service.ports ?? [];
  const first = ports[0];
  if (!hasIP(service) || !first) return {};
  const name = envName(service.name);
  const ip = service.clusterIP!;
  const out: Record<string, string> = { [`${name}_SERVICE_HOST`]: ip, [`${name}_SERVICE_PORT`]: String(first.port) };
  for (const p of ports) if (p.name) out[`${name}_SERVICE_PORT_${envName(p.name)}`] = String(p.port);
  const url = (p: LinkedPort) => `${(p.protocol ?? 'TCP').toLowerCase()}://${isIPv6(ip) ? `[${ip}]` : ip}:${p.port}`;
  out[`${name}_PORT`] = url(first);
  for (const p of ports) {
    const proto = (p.protocol ?? 'TCP').toUpperCase();
    const prefix = `${name}_PORT_${p.port}_${proto}`;
    Object.assign(out, { [prefix]: url(p), [`${prefix}_PROTO`]: proto.toLowerCase(), [`${prefix}_PORT`]: String(p.port), [`${prefix}_ADDR`]: ip });
  }
  return out;
}

/**
 * The service environment of a pod in `namespace`: `kubernetes` (given apart: where the API really is
 * for this node's pods) and, with `links`, the namespace's other Services, in name order.
 */
export function serviceLinkEnv(namespace: string, links: boolean, services: readonly LinkedService[], kubernetes: LinkedService): Record<string, string> {
  const out: Record<string, string> = serviceVariables(kubernetes);
  const chosen = links ? services.filter((s) => s.namespace === namespace && hasIP(s) && !(namespace === 'default' && s.name === 'kubernetes')) : [];
  // A Service of the pod's own namespace named `kubernetes` wins over the API's, as in the kubelet.
  for (const s of [...chosen].sort((a, b) => a.name.localeCompare(b.name))) Object.assign(out, serviceVariables(s));
  return out;
}
