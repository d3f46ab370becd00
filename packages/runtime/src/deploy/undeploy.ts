/**
 * Removing a deployed function: the Triggers this deployer made for it, then its Service and
 * Deployment (background propagation: the garbage collector removes the ReplicaSets and pods, whose
 * runtimes drain as on any scale-down), or its Knative Service.
 */
import type { KubeClient, ResourceType } from '@func/kube-client';
import { clusterFailure } from './cluster.js';
import type { Manifest } from './kube-types.js';
import { findDeployed, notDeployed, resolveTarget, type TargetOptions } from './target.js';
import { staleTriggers, TRIGGER_API_VERSION } from './triggers.js';

async function remove(kube: KubeClient, type: ResourceType, name: string, namespace: string): Promise<boolean> {
  try {
    await kube.delete(type, name, { namespace, propagationPolicy: 'Background' });
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw clusterFailure(err);
  }
}

/** What was deleted, as `kind/name`; empty when nothing was there and `ignoreNotFound`. */
export async function removeFunction(opts: TargetOptions & { ignoreNotFound?: boolean }): Promise<string[]> {
  const target = await resolveTarget(opts);
  const { kube } = target.cluster;
  const { Resources, resourceType } = await import('@func/kube-client');
  const { name, namespace } = target;
  const found = await findDeployed(kube, name, namespace);
  if (!found.deployment && !found.knative) {
    kube.close();
    if (opts.ignoreNotFound) return [];
    throw notDeployed(target);
  }
  const removed: string[] = [];
  const triggers = resourceType(TRIGGER_API_VERSION, 'Trigger', 'triggers');
  const listed = await kube.list<Manifest>(triggers, { namespace }).catch(() => ({ items: [] as Manifest[] }));
  for (const t of staleTriggers(listed.items, name, [])) if (await remove(kube, triggers, t, namespace)) removed.push(`trigger/${t}`);
  if (found.knative && (await remove(kube, Resources.knativeServices, name, namespace))) removed.push(`ksvc/${name}`);
  if (found.deployment) {
    if (await remove(kube, Resources.services, name, namespace)) removed.push(`service/${name}`);
    if (await remove(kube, Resources.deployments, name, namespace)) removed.push(`deployment/${name}`);
  }
  kube.close();
  return removed;
}
