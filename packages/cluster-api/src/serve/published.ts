/**
 * What the server publishes about its own parts for clients that only have a kubeconfig: a
 * ConfigMap (its namespace made if missing) whose data the server writes at start, labelled
 * `app.kubernetes.io/managed-by: cluster-api` so `migrate` takes it as the target's own. Written
 * through the in-process registry by the API server's own loop; the parts' identities stay read-only.
 */
import { isApiError } from '../api/errors.js';
import type { KubeObject } from '../api/meta.js';
import type { Registry } from '../registry/rest.js';

export interface Published {
  namespace: string;
  name: string;
  /** `app.kubernetes.io/component`: the part it is about. */
  component: string;
  data: Record<string, string>;
}

export async function publishConfigMap(registry: Pick<Registry, 'find'>, what: Published): Promise<void> {
  const namespaces = registry.find('', 'v1', 'namespaces');
  const configMaps = registry.find('', 'v1', 'configmaps');
  if (!namespaces || !configMaps) return;
  const tolerate409 = (err: unknown) => {
    if (!(isApiError(err) && err.code === 409)) throw err;
    return undefined;
  };
  await namespaces.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: what.namespace } } as KubeObject).catch(tolerate409);
  const ctx = { namespace: what.namespace };
  const labels = { 'app.kubernetes.io/component': what.component, 'app.kubernetes.io/managed-by': 'cluster-api' };
  const made = await configMaps.create(ctx, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: what.name, namespace: what.namespace, labels }, data: what.data } as KubeObject).catch(tolerate409);
  if (!made) await configMaps.patch(ctx, what.name, 'merge', { metadata: { labels }, data: what.data });
}
