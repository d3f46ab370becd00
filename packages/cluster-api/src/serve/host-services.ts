/**
 * Services for what `serve` runs on the host itself, so pods in network namespaces of their own (the
 * oci runtime) reach it by a cluster name, as they reach the API through the `kubernetes` Service:
 * the gateway as `gateway.knative-serving` (what a Route's cluster-local name points to) and the
 * broker's ingress as `broker-ingress.knative-eventing` (the name Knative's multi-tenant broker
 * has). Each is a selector-less ClusterIP Service on port 80 whose Endpoints are the address and port
 * the part listens on, rewritten at every start (the port may change); the node's service proxy
 * forwards to it from the clusterIP.
 */
import { isIPv4 } from 'node:net';
import { isApiError } from '../api/errors.js';
import type { KubeObject } from '../api/meta.js';
import type { Registry } from '../registry/rest.js';

export interface HostService {
  namespace: string;
  name: string;
  component: string;
  /** Where the part listens (a wildcard bind is reached on loopback). */
  host: string;
  port: number;
}

export const GatewayService = { namespace: 'knative-serving', name: 'gateway' } as const;
export const BrokerIngressService = { namespace: 'knative-eventing', name: 'broker-ingress' } as const;

const tolerate = (code: number) => (err: unknown) => {
  if (!(isApiError(err) && err.code === code)) throw err;
  return undefined;
};

export async function publishHostService(registry: Pick<Registry, 'find'>, s: HostService): Promise<void> {
  const find = (plural: string) => registry.find('', 'v1', plural)!;
  const ip = s.host === '0.0.0.0' || s.host === '' ? '127.0.0.1' : s.host;
  if (!isIPv4(ip)) return;
  const labels = { 'app.kubernetes.io/component': s.component, 'app.kubernetes.io/managed-by': 'cluster-api' };
  const ctx = { namespace: s.namespace };
  await find('namespaces').create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: s.namespace } } as KubeObject).catch(tolerate(409));
  await find('services').create(ctx, {
    apiVersion: 'v1', kind: 'Service', metadata: { name: s.name, namespace: s.namespace, labels },
    spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: s.port }] },
  } as KubeObject).catch(tolerate(409));
  const subsets = [{ addresses: [{ ip }], ports: [{ name: 'http', port: s.port, protocol: 'TCP' }] }];
  const made = await find('endpoints').create(ctx, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: s.name, namespace: s.namespace, labels }, subsets } as KubeObject).catch(tolerate(409));
  if (!made) await find('endpoints').patch(ctx, s.name, 'merge', { subsets });
}
