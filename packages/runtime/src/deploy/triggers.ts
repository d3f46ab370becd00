/**
 * One Knative Eventing Trigger per func.yaml `deploy.subscriptions` entry, as Knative func's raw
 * deployer makes them: named `<function>-trigger-<8 hex of sha256(broker|key=value…)>` (so the same
 * subscription keeps its name and a changed one gets a new one), annotated
 * `func.knative.dev/managed-by: func-raw-deployer`, owned by the Deployment (deleted with it), with
 * the subscription's source as the Broker and its filters as exact attribute matches. The
 * subscriber is the function's Service by reference rather than Knative's cluster-DNS URI, which
 * resolves only where cluster DNS does; a Broker resolves a Service reference on any cluster.
 */
import { createHash } from 'node:crypto';
import type { FunctionProject, SubscriptionSpec } from '../project.js';
import type { Manifest, OwnerReference } from './kube-types.js';

export const MANAGED_BY = 'func.knative.dev/managed-by';
export const MANAGED_BY_VALUE = 'func-raw-deployer';
export const TRIGGER_API_VERSION = 'eventing.knative.dev/v1';

export function triggerName(functionName: string, sub: SubscriptionSpec): string {
  const filters = sub.filters ?? {};
  const parts = [sub.source, ...Object.keys(filters).sort().map((k) => `${k}=${filters[k]}`)];
  return `${functionName}-trigger-${createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 8)}`;
}

export interface TriggerInput {
  project: FunctionProject;
  namespace: string;
  subscriber: { apiVersion: string; kind: string; name: string };
  owner?: OwnerReference;
}

export function triggerManifests({ project, namespace, subscriber, owner }: TriggerInput): Manifest[] {
  return (project.doc.deploy?.subscriptions ?? []).map((sub) => ({
    apiVersion: TRIGGER_API_VERSION,
    kind: 'Trigger',
    metadata: {
      name: triggerName(project.name, sub),
      namespace,
      annotations: { [MANAGED_BY]: MANAGED_BY_VALUE },
      ...(owner ? { ownerReferences: [owner] } : {}),
    },
    spec: {
      broker: sub.source,
      ...(sub.filters && Object.keys(sub.filters).length ? { filter: { attributes: sub.filters } } : {}),
      subscriber: { ref: { ...subscriber, namespace } },
    },
  }));
}

/** Triggers this deployer made for the function that func.yaml no longer asks for. */
export function staleTriggers(existing: Manifest[], functionName: string, wanted: Manifest[]): string[] {
  const keep = new Set(wanted.map((t) => t.metadata.name));
  return existing
    .filter((t) => t.metadata.name.startsWith(`${functionName}-trigger-`) && t.metadata.annotations?.[MANAGED_BY] === MANAGED_BY_VALUE && !keep.has(t.metadata.name))
    .map((t) => t.metadata.name);
}
