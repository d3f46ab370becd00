/**
 * Where the local gateway answers, published in the cluster: the ConfigMap `config-gateway` in
 * `knative-serving` (beside Knative's `config-domain` and `config-network`) holds its `url`, so a
 * client that only has the kubeconfig (`func-runtime deploy`) can reach a Route's host through it
 * (`Host: hello.default.localhost` at that address), as Kourier's Service status tells a client
 * where its gateway is. Written by the API server's own loop when the gateway listens
 * (serve/published.ts); the gateway's identity stays read-only.
 */
import type { Registry } from '../../registry/rest.js';
import { publishConfigMap } from '../../serve/published.js';

export const GatewayConfigMap = { namespace: 'knative-serving', name: 'config-gateway' } as const;

export const publishGatewayUrl = (registry: Pick<Registry, 'find'>, url: string): Promise<void> =>
  publishConfigMap(registry, { ...GatewayConfigMap, component: 'gateway', data: { url } });
