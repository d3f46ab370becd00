/**
 * What `func-runtime describe` reports about a deployed function, as Knative's `func describe` and
 * `kubectl describe` between them would: the image it runs, replicas, each pod, where it answers,
 * its Triggers, and the recent Events of its Deployment, ReplicaSets and pods (or Knative Service).
 */
import type { KubeClient } from '@func/kube-client';
import { clusterFailure } from './cluster.js';
import { coldStarts, type ColdStartLine } from './cold-starts.js';
import type { KubeEvent, Manifest, Pod } from './kube-types.js';
import { CONTAINER_NAME, NAME_LABEL } from './manifests.js';
import { revisionsOf, type RevisionLine } from './revisions.js';
import { podSummary, type PodSummary } from './rollout.js';
import { findDeployed, notDeployed, resolveTarget, type TargetOptions } from './target.js';
import { staleTriggers, TRIGGER_API_VERSION } from './triggers.js';
import { whereItAnswers, type Where } from './where.js';

export interface EventLine {
  time?: string;
  type?: string;
  reason?: string;
  object: string;
  message?: string;
  count?: number;
}

export interface Description {
  name: string;
  namespace: string;
  kind: 'Deployment' | 'KnativeService';
  image?: string;
  replicas: { desired: number; updated: number; ready: number; available: number };
  pods: PodSummary[];
  triggers: string[];
  /** A Knative Service's revisions, newest first, with their share of the traffic. */
  revisions?: RevisionLine[];
  /** A Knative Service's cold starts per revision, as the local cluster's gateway counts them. */
  coldStarts?: ColdStartLine[];
  where: Where;
  events: EventLine[];
}

const eventTime = (e: KubeEvent) => e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.metadata.creationTimestamp;

/** Events about the function's objects: the workload itself and what it owns, named after it. */
export function recentEvents(events: KubeEvent[], name: string, limit = 10): EventLine[] {
  return events
    .filter((e) => e.involvedObject?.name === name || e.involvedObject?.name?.startsWith(`${name}-`))
    .sort((a, b) => String(eventTime(a) ?? '').localeCompare(String(eventTime(b) ?? '')))
    .slice(-limit)
    .map((e) => ({ time: eventTime(e), type: e.type, reason: e.reason, object: `${(e.involvedObject.kind ?? '').toLowerCase()}/${e.involvedObject.name}`, message: e.message, count: e.count }));
}

export async function describeFunction(opts: TargetOptions): Promise<Description> {
  const target = await resolveTarget(opts);
  const { kube } = target.cluster;
  const { name, namespace } = target;
  try {
    const found = await findDeployed(kube, name, namespace);
    if (!found.deployment && !found.knative) throw notDeployed(target);
    return await gather(kube, name, namespace, found);
  } catch (err) {
    throw clusterFailure(err);
  } finally {
    kube.close();
  }
}

async function gather(kube: KubeClient, name: string, namespace: string, found: Awaited<ReturnType<typeof findDeployed>>): Promise<Description> {
  const { Resources, resourceType } = await import('@func/kube-client');
  const kind = found.knative ? 'KnativeService' : 'Deployment';
  const [pods, events, triggers] = await Promise.all([
    kube.list<Pod>(Resources.pods, { namespace, labelSelector: `${NAME_LABEL}=${name}` }),
    kube.list<KubeEvent>(Resources.events, { namespace }).catch(() => ({ items: [] as KubeEvent[] })),
    kube.list<Manifest>(resourceType(TRIGGER_API_VERSION, 'Trigger', 'triggers'), { namespace }).catch(() => ({ items: [] as Manifest[] })),
  ]);
  const template = (found.knative ?? found.deployment)?.spec as { template?: { spec?: { containers?: { name: string; image: string }[] } } } | undefined;
  const container = template?.template?.spec?.containers?.find((c) => c.name === CONTAINER_NAME) ?? template?.template?.spec?.containers?.[0];
  const s = found.deployment?.status ?? {};
  const summaries = pods.items.map(podSummary).sort((a, b) => a.name.localeCompare(b.name));
  const revisions = found.knative ? await revisionsOf(kube, found.knative) : undefined;
  const readiness = (container as { readinessProbe?: { httpGet?: { path?: string } } } | undefined)?.readinessProbe?.httpGet?.path ?? '/health/readiness';
  return {
    name, namespace, kind, image: container?.image,
    replicas: found.deployment
      ? { desired: found.deployment.spec.replicas ?? 1, updated: s.updatedReplicas ?? 0, ready: s.readyReplicas ?? 0, available: s.availableReplicas ?? 0 }
      : { desired: summaries.length, updated: summaries.length, ready: summaries.filter((p) => p.ready).length, available: summaries.filter((p) => p.ready).length },
    pods: summaries,
    ...(revisions ? { revisions, coldStarts: await coldStarts(kube, namespace, revisions.map((r) => r.name)) } : {}),
    triggers: staleTriggers(triggers.items, name, []),
    where: await whereItAnswers(kube, { kind, name, namespace, readinessPath: readiness }),
    events: recentEvents(events.items, name),
  };
}
