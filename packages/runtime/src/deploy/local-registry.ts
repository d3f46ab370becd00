/**
 * The cluster's own registry, found the standard way (KEP-1755, as Tilt and ko find kind's, k3d's
 * and minikube's): the ConfigMap `local-registry-hosting` in `kube-public`, read with the user's
 * kubeconfig, whose `localRegistryHosting.v1` YAML names the `host` a developer's machine pushes to.
 * `cluster-api serve` publishes its registry there; a push to it is the node's image store. The
 * credentials for it are the kubeconfig's token (the registry asks the API about it).
 */
import type { KubeClient } from '@func/kube-client';

export interface LocalRegistry {
  /** `127.0.0.1:8093`: what an image reference names. */
  host: string;
  /** The kubeconfig's bearer token, sent as the password (the registry takes any user name). */
  token?: string;
}

export const LocalRegistryHosting = { namespace: 'kube-public', name: 'local-registry-hosting', key: 'localRegistryHosting.v1' } as const;

/** `host` of the KEP's YAML, if it is a host[:port] (anything else is not taken). */
export async function hostOf(yamlText: string): Promise<string | undefined> {
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    doc = parse(yamlText);
  } catch {
    return undefined;
  }
  const host = (doc as { host?: unknown } | null)?.host;
  return typeof host === 'string' && /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9a-fA-F:]+\](?::\d{1,5})?$/.test(host) ? host : undefined;
}

/** The registry the cluster advertises, or undefined when it advertises none (or the user may not read it). */
export async function localRegistry(kube: KubeClient): Promise<LocalRegistry | undefined> {
  const { Resources } = await import('@func/kube-client');
  let data: Record<string, string> | undefined;
  try {
    data = (await kube.get<{ data?: Record<string, string> }>(Resources.configMaps, LocalRegistryHosting.name, { namespace: LocalRegistryHosting.namespace })).data;
  } catch {
    return undefined;
  }
  const host = data?.[LocalRegistryHosting.key] && (await hostOf(data[LocalRegistryHosting.key]!));
  if (!host) return undefined;
  const { credentials } = kube.connection;
  const token = credentials.token ?? (credentials.tokenFile ? await readToken(credentials.tokenFile) : undefined);
  return { host, ...(token && { token }) };
}

async function readToken(file: string): Promise<string | undefined> {
  const { readFile } = await import('node:fs/promises');
  return readFile(file, 'utf8').then((t) => t.trim() || undefined, () => undefined);
}
