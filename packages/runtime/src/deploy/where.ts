/**
 * Where a deployed function answers, from this machine and from the cluster: its Service's
 * ClusterIP when this machine reaches it (the local cluster's service proxy makes ClusterIPs
 * answer on the node), `kubectl port-forward`, the API server's service proxy, the cluster-DNS
 * name; for a Knative Service, the URL Knative reports.
 */
import type { KubeClient } from '@func/kube-client';
import { send } from '../client/loopback-fetch.js';
import type { Manifest, Service } from './kube-types.js';

export interface Where {
  /** A URL that answered from this machine, if any. */
  url?: string;
  /** A Knative Service's: the gateway this machine reaches its host through (`Host: <its host>`). */
  gateway?: string;
  /** Label → how to reach it, in the order to show. */
  lines: [string, string][];
}

/**
 * Whether the function's readiness path answers 200 at `url`. Only a 200 counts: on some networks
 * a gateway answers any address (a 404 from something that is not the function). An address that
 * refuses at once is asked again for `withinMs` (right after a rollout the node's service proxy may
 * not have the new endpoint yet); one that does not answer within 1.5 s is not this machine's.
 */
async function answers(url: string, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    try {
      const res = await send(new URL(url), { signal: AbortSignal.timeout(1500) });
      await res.body?.cancel();
      if (res.status === 200) return true;
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') return false;
    }
    if (Date.now() + delay > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

export async function whereItAnswers(kube: KubeClient, opts: { kind: 'Deployment' | 'KnativeService'; name: string; namespace: string; readinessPath: string; settleMs?: number }): Promise<Where> {
  const { Resources } = await import('@func/kube-client');
  const { name, namespace } = opts;
  if (opts.kind === 'KnativeService') {
    const ksvc = await kube.get<Service>(Resources.knativeServices, name, { namespace });
    return knativeWhere(ksvc.status?.url, await gatewayAddress(kube), opts.readinessPath);
  }
  const svc = await kube.get<Service>(Resources.services, name, { namespace });
  const port = svc.spec.ports[0]?.port ?? 80;
  const lines: [string, string][] = [];
  let url: string | undefined;
  const ip = svc.spec.clusterIP;
  if (ip && ip !== 'None') {
    const candidate = `http://${ip.includes(':') ? `[${ip}]` : ip}${port === 80 ? '' : `:${port}`}/`;
    if (await answers(new URL(opts.readinessPath.slice(1), candidate).href, opts.settleMs ?? 0)) {
      url = candidate;
      lines.push(['URL', candidate]);
    }
  }
  lines.push(['port-forward', `kubectl port-forward -n ${namespace} svc/${name} 8080:${port}   (then http://localhost:8080/)`]);
  lines.push(['API proxy', `${kube.connection.server.replace(/\/$/, '')}/api/v1/namespaces/${namespace}/services/${name}:http/proxy/   (kubectl get --raw /api/v1/namespaces/${namespace}/services/${name}:http/proxy/)`]);
  lines.push(['in-cluster', `http://${name}.${namespace}.svc.cluster.local${port === 80 ? '' : `:${port}`}`]);
  return { url, lines };
}

/**
 * The local cluster's gateway address, which it publishes in the ConfigMap `config-gateway` of
 * `knative-serving` (`url`); undefined on a cluster without one (a real Knative: its URL is reached
 * through its own ingress and DNS).
 */
export async function gatewayAddress(kube: KubeClient): Promise<string | undefined> {
  const { Resources } = await import('@func/kube-client');
  try {
    const cm = await kube.get<Manifest & { data?: Record<string, string> }>(Resources.configMaps, 'config-gateway', { namespace: 'knative-serving' });
    const url = cm.data?.url;
    return url && /^https?:\/\/[^/]+$/.test(url) ? url : undefined;
  } catch {
    return undefined;
  }
}

/** `url` on this machine: its host on the gateway's port (`*.localhost` names this machine, RFC 6761). */
export function throughGateway(url: string, gateway: string): string {
  const u = new URL(url);
  u.port = new URL(gateway).port;
  return u.href;
}

async function knativeWhere(url: string | undefined, gateway: string | undefined, readinessPath: string): Promise<Where> {
  if (!url) return { lines: [] };
  const lines: [string, string][] = [['URL', url]];
  if (!gateway) return { url, lines };
  const host = new URL(url).host;
  const here = throughGateway(url, gateway);
  const ok = await answers(new URL(readinessPath, here).href, 0);
  lines.push([ok ? 'from here' : 'gateway', `${here}   (curl -H 'Host: ${host}' ${gateway}/)`]);
  return { url: ok ? here : undefined, gateway, lines };
}
