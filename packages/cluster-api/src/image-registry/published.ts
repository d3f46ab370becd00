/**
 * The registry advertised as KEP-1755 has clusters advertise a local registry (kind, k3d, minikube,
 * Tilt read it): ConfigMap `local-registry-hosting` in `kube-public` whose `localRegistryHosting.v1`
 * is YAML with `host` (where a developer's machine pushes), `hostFromContainerRuntime` (where the
 * node pulls), `hostFromClusterNetwork` (where a pod reaches it) and `help`. Here the node agents
 * pull from the host itself, so `hostFromContainerRuntime` is the registry's address; so is
 * `hostFromClusterNetwork` where pods share the host's network (the process and simulated
 * runtimes), and it is left out where they have network namespaces of their own (oci), from which
 * the registry's loopback address is not reachable. Written by the API server's own loop (serve/published.ts).
 */
import type { Registry } from '../registry/rest.js';
import { publishConfigMap } from '../serve/published.js';

export const LocalRegistryHosting = { namespace: 'kube-public', name: 'local-registry-hosting', key: 'localRegistryHosting.v1' } as const;

export const registryHelp = 'cluster-api serve\'s registry: push with a token the cluster\'s API accepts (Bearer, or the password of Basic credentials); plain HTTP (skopeo --dest-tls-verify=false); see packages/cluster-api/README.md "The image registry"';

/** The ConfigMap's value: YAML (each string JSON-quoted, which YAML reads as it is). */
export const hostingYaml = (host: string, podsShareHostNetwork: boolean): string =>
  [`host: ${JSON.stringify(host)}`, `hostFromContainerRuntime: ${JSON.stringify(host)}`, ...(podsShareHostNetwork ? [`hostFromClusterNetwork: ${JSON.stringify(host)}`] : []), `help: ${JSON.stringify(registryHelp)}`, ''].join('\n');

export const publishRegistryHost = (registry: Pick<Registry, 'find'>, host: string, podsShareHostNetwork: boolean): Promise<void> =>
  publishConfigMap(registry, { namespace: LocalRegistryHosting.namespace, name: LocalRegistryHosting.name, component: 'registry', data: { [LocalRegistryHosting.key]: hostingYaml(host, podsShareHostNetwork) } });
