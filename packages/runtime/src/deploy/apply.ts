/**
 * Writing the function's objects: server-side apply with field manager `func` (forced: these
 * objects are the function's, and func.yaml is their source of truth, as `kubectl apply
 * --server-side --force-conflicts` would take them back), the Service owned by the Deployment (as
 * Knative's raw deployer does), Triggers synced (stale ones deleted), the objects func.yaml refers
 * to checked first, and the previous Deployment put back when a rollout fails.
 */
import type { KubeClient, ResourceType } from '@func/kube-client';
import { CommandError } from '../command-error.js';
import type { References } from './envs.js';
import type { Deployment, Manifest, OwnerReference } from './kube-types.js';
import { staleTriggers, TRIGGER_API_VERSION } from './triggers.js';

export const FIELD_MANAGER = 'func';

async function kinds() {
  const { Resources, resourceType } = await import('@func/kube-client');
  return {
    ...Resources,
    persistentVolumeClaims: resourceType('v1', 'PersistentVolumeClaim', 'persistentvolumeclaims'),
    triggers: resourceType(TRIGGER_API_VERSION, 'Trigger', 'triggers'),
    autoscalers: resourceType('autoscaling/v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers'),
  };
}

export async function apply<T extends Manifest>(kube: KubeClient, type: ResourceType, obj: T): Promise<T> {
  try {
    return await kube.apply<T>(type, obj, { fieldManager: FIELD_MANAGER, force: true, namespace: obj.metadata.namespace });
  } catch (err) {
    const e = err as { code?: number; reason?: string; message?: string };
    if (e.code === 404 && /namespaces? "[^"]+" not found/.test(e.message ?? '')) {
      throw new CommandError(`Namespace ${obj.metadata.namespace} does not exist in the cluster. Create it (kubectl create namespace ${obj.metadata.namespace}) or deploy to another with --namespace.`);
    }
    throw err;
  }
}

/** Missing Secrets, ConfigMaps, claims or service account as one message, before anything is changed. */
export async function checkReferences(kube: KubeClient, namespace: string, refs: References, serviceAccount?: string): Promise<void> {
  const k = await kinds();
  const wanted: [ResourceType, string, string][] = [
    ...[...refs.secrets].map((n): [ResourceType, string, string] => [k.secrets, n, 'Secret']),
    ...[...refs.configMaps].map((n): [ResourceType, string, string] => [k.configMaps, n, 'ConfigMap']),
    ...[...refs.claims].map((n): [ResourceType, string, string] => [k.persistentVolumeClaims, n, 'PersistentVolumeClaim']),
    ...(serviceAccount && serviceAccount !== 'default' ? [[k.serviceAccounts, serviceAccount, 'ServiceAccount'] as [ResourceType, string, string]] : []),
  ];
  const missing = (
    await Promise.all(
      wanted.map(([type, name, kind]) =>
        kube.get(type, name, { namespace }).then(
          () => undefined,
          (err: { code?: number }) => {
            if (err.code === 404) return `${kind} "${name}"`;
            if (err.code === 403) return undefined;
            throw err;
          },
        ),
      ),
    )
  ).filter(Boolean);
  if (missing.length) throw new CommandError(`func.yaml refers to ${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not in namespace ${namespace}. Create ${missing.length === 1 ? 'it' : 'them'} first (kubectl create secret / configmap …), then deploy again.`);
}

export function ownerOf(dep: Deployment): OwnerReference {
  return { apiVersion: 'apps/v1', kind: 'Deployment', name: dep.metadata.name, uid: dep.metadata.uid!, controller: true, blockOwnerDeletion: true };
}

/**
 * The Deployment, then its Service and autoscaler owned by it; an autoscaler this deployer made
 * that func.yaml no longer asks for (no scale.max) is deleted.
 */
export async function applyRaw(kube: KubeClient, deployment: Deployment, service: Manifest, autoscaler?: Manifest): Promise<Deployment> {
  const k = await kinds();
  const applied = await apply(kube, k.deployments, deployment);
  const owned = (m: Manifest): Manifest => ({ ...m, metadata: { ...m.metadata, ownerReferences: [ownerOf(applied)] } });
  await apply(kube, k.services, owned(service));
  const { name, namespace } = deployment.metadata;
  if (autoscaler) await apply(kube, k.autoscalers, owned(autoscaler));
  else {
    const stale = await kube.get<Manifest>(k.autoscalers, name, { namespace }).catch((err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err)));
    if (stale?.metadata.ownerReferences?.some((o) => o.uid === applied.metadata.uid)) await kube.delete(k.autoscalers, name, { namespace });
  }
  return applied;
}

/** Puts the Deployment's previous pod template back (its pods never stopped serving). */
export async function rollBack(kube: KubeClient, previous: Deployment): Promise<void> {
  const k = await kinds();
  const { name, namespace, labels } = previous.metadata;
  // The controller's own bookkeeping (the revision number) stays the controller's.
  const annotations = Object.fromEntries(Object.entries(previous.metadata.annotations ?? {}).filter(([key]) => !key.startsWith('deployment.kubernetes.io/')));
  await apply(kube, k.deployments, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace, labels, annotations }, spec: previous.spec });
}

export async function previousDeployment(kube: KubeClient, name: string, namespace: string): Promise<Deployment | undefined> {
  const k = await kinds();
  return kube.get<Deployment>(k.deployments, name, { namespace }).catch((err: { code?: number }) => {
    if (err.code === 404) return undefined;
    throw err;
  });
}

/** Applies the wanted Triggers and deletes the ones this deployer made that func.yaml no longer lists. */
export async function syncTriggers(kube: KubeClient, functionName: string, namespace: string, wanted: Manifest[]): Promise<{ applied: string[]; deleted: string[] }> {
  const k = await kinds();
  for (const t of wanted) await apply(kube, k.triggers, t);
  const existing = await kube.list<Manifest>(k.triggers, { namespace });
  const deleted = staleTriggers(existing.items, functionName, wanted);
  for (const name of deleted) await kube.delete(k.triggers, name, { namespace }).catch((err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(err)));
  return { applied: wanted.map((t) => t.metadata.name), deleted };
}
