/**
 * Where a deployed function answers, from this machine and from the cluster: its Service's
 * ClusterIP when this machine reaches it (the local cluster's service proxy makes ClusterIPs
 * answer on the node), `kubectl port-forward`, the API server's service proxy, the cluster-DNS
 * name; for a Knative Service, the URL Knative reports.
 */
import type { KubeClient } from '@func/kube-client';
import type { Service } from './kube-types.js';

export interface Where {
  /** A URL that answered from this machine, if any. */
  url?: string;
  /** Label → how to reach it, in the order to show. */
  lines: [string, string][];
}

/**
 * Whether the function's readiness path answers 200 at `url` within a short time. Only a 200
 * counts: on some networks a gateway answers any address (a 404 from something that is not the
 * function).
 */
async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1500) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

export async function whereItAnswers(kube: KubeClient, opts: { kind: 'Deployment' | 'KnativeService'; name: string; namespace: string; readinessPath: string }): Promise<Where> {
  const { Resources } = await import('@func/kube-client');
  const { name, namespace } = opts;
  if (opts.kind === 'KnativeService') {
    const ksvc = await kube.get<Service>(Resources.knativeServices, name, { namespace });
    const url = ksvc.status?.url;
    return { url, lines: url ? [['URL', url]] : [] };
  }
  const svc = await kube.get<Service>(Resources.services, name, { namespace });
  const port = svc.spec.ports[0]?.port ?? 80;
  const lines: [string, string][] = [];
  let url: string | undefined;
  const ip = svc.spec.clusterIP;
  if (ip && ip !== 'None') {
    const candidate = `http://${ip.includes(':') ? `[${ip}]` : ip}${port === 80 ? '' : `:${port}`}/`;
    if (await answers(new URL(opts.readinessPath.slice(1), candidate).href)) {
      url = candidate;
      lines.push(['URL', candidate]);
    }
  }
  lines.push(['port-forward', `kubectl port-forward -n ${namespace} svc/${name} 8080:${port}   (then http://localhost:8080/)`]);
  lines.push(['API proxy', `${kube.connection.server.replace(/\/$/, '')}/api/v1/namespaces/${namespace}/services/${name}:http/proxy/   (kubectl get --raw /api/v1/namespaces/${namespace}/services/${name}:http/proxy/)`]);
  lines.push(['in-cluster', `http://${name}.${namespace}.svc.cluster.local${port === 80 ? '' : `:${port}`}`]);
  return { url, lines };
}
