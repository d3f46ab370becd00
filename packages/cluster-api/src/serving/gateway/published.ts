/**
 * Where the local gateway answers, published in the cluster: the ConfigMap `config-gateway` in
 * `knative-serving` (beside Knative's `config-domain` and `config-network`) holds its `url`, so a
 * client that only has the kubeconfig (`func-runtime deploy`) can reach a Route's host through it
 * (`Host: hello.default.localhost` at that address), as Kourier's Service status tells a client
 * where its gateway is. Written by the API server's own loop when the gateway listens; the
 * gateway's identity stays read-only.
 */
import { isApiError } from '../../api/errors.js';
import type { KubeObject } from '../../api/meta.js';
import type { Registry } from '../../registry/rest.js';

export const GatewayConfigMap = { namespace: 'knative-serving', name: 'config-gateway' } as const;

export async function publishGatewayUrl(registry: Pick<Registry, 'find'>, url: string): Promise<void> {
  const namespaces = registry.find('', 'v1', 'namespaces');
  const configMaps = registry.find('', 'v1', 'configmaps');
  if (!namespaces || !configMaps) return;
  const tolerate409 = (err: unknown) => {
    if (!(isApiError(err) && err.code === 409)) throw err;
    return undefined;
  };
  await namespaces.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GatewayConfigMap.namespace } } as KubeObject).catch(tolerate409);
  const ctx = { namespace: GatewayConfigMap.namespace };
  const labels = { 'app.kubernetes.io/component': 'gateway', 'app.kubernetes.io/managed-by': 'cluster-api' };
  const made = await configMaps.create(ctx, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: GatewayConfigMap.name, namespace: GatewayConfigMap.namespace, labels }, data: { url } } as KubeObject).catch(tolerate409);
  if (!made) await configMaps.patch(ctx, GatewayConfigMap.name, 'merge', { data: { url } });
}
