/**
 * A Knative Service's revisions and where its traffic goes, as `kn service describe` and
 * `kn revision list` show them, and the functions of a namespace as `kn service list` /
 * `func list` do (Knative Services and raw Deployments). `rollback` moves 100 % of the traffic to
 * the ready revision before the one serving (or a named one) by setting the Service's
 * `spec.traffic`, as `kn service update --traffic <rev>=100` does; the next deploy sets it back to
 * the latest revision.
 */
import type { KubeClient } from '@func/kube-client';
import { CommandError } from '../command-error.js';
import { clusterFailure, serves } from './cluster.js';
import type { Condition, Deployment, Manifest, Service, TrafficTarget } from './kube-types.js';
import { CONTAINER_NAME } from './manifests.js';
import { resolveTarget, type TargetOptions } from './target.js';

const SERVICE_LABEL = 'serving.knative.dev/service';
const GENERATION_LABEL = 'serving.knative.dev/configurationGeneration';

type Revision = Manifest & { spec?: { containers?: { name?: string; image?: string }[] }; status?: { conditions?: Condition[] } };

export interface RevisionLine {
  name: string;
  generation: number;
  created?: string;
  ready: boolean;
  image?: string;
  /** The share of the Service's traffic it gets (status.traffic), 0 when none. */
  percent: number;
  tags: string[];
}

export interface FunctionLine {
  name: string;
  kind: 'KnativeService' | 'Deployment';
  url?: string;
  ready: boolean;
  /** A Knative Service's latest ready revision; a Deployment's revision number. */
  latestRevision?: string;
}

const isReady = (conditions: Condition[] | undefined) => conditions?.find((c) => c.type === 'Ready')?.status === 'True';

async function types() {
  const { Resources, resourceType } = await import('@func/kube-client');
  return { ...Resources, revisions: resourceType('serving.knative.dev/v1', 'Revision', 'revisions') };
}

export async function revisionsOf(kube: KubeClient, ksvc: Service): Promise<RevisionLine[]> {
  const t = await types();
  const { name, namespace } = ksvc.metadata;
  const list = await kube.list<Revision>(t.revisions, { namespace, labelSelector: `${SERVICE_LABEL}=${name}` });
  const traffic = ksvc.status?.traffic ?? [];
  return list.items
    .map((r) => {
      const targets = traffic.filter((x) => x.revisionName === r.metadata.name);
      const container = r.spec?.containers?.find((c) => c.name === CONTAINER_NAME) ?? r.spec?.containers?.[0];
      return {
        name: r.metadata.name,
        generation: Number(r.metadata.labels?.[GENERATION_LABEL] ?? 0),
        created: r.metadata.creationTimestamp,
        ready: isReady(r.status?.conditions),
        image: container?.image,
        percent: targets.reduce((sum, x) => sum + (x.percent ?? 0), 0),
        tags: targets.flatMap((x) => (x.tag ? [x.tag] : [])),
      };
    })
    .sort((a, b) => b.generation - a.generation || a.name.localeCompare(b.name));
}

/** The namespace's functions: Knative Services and Deployments labelled `function.knative.dev: "true"`. */
export async function listFunctions(opts: TargetOptions): Promise<{ namespace: string; functions: FunctionLine[] }> {
  const { connect } = await import('./cluster.js');
  const cluster = await connect(opts);
  const { kube, namespace } = cluster;
  const t = await types();
  const selector = { namespace, labelSelector: 'function.knative.dev=true' };
  try {
    const [ksvcs, deployments] = await Promise.all([
      serves(kube, 'serving.knative.dev/v1', 'services').then((yes) => (yes ? kube.list<Service>(t.knativeServices, selector) : { items: [] as Service[] })),
      serves(kube, 'apps/v1', 'deployments').then((yes) => (yes ? kube.list<Deployment>(t.deployments, selector) : { items: [] as Deployment[] })),
    ]);
    const functions: FunctionLine[] = [
      ...ksvcs.items.map((k) => ({ name: k.metadata.name, kind: 'KnativeService' as const, url: k.status?.url, ready: isReady(k.status?.conditions), latestRevision: k.status?.latestReadyRevisionName })),
      ...deployments.items
        // A Knative Service's revisions run as Deployments carrying the function's labels: they are its, not functions of their own.
        .filter((d) => !d.metadata.labels?.[SERVICE_LABEL])
        .map((d) => ({ name: d.metadata.name, kind: 'Deployment' as const, ready: (d.status?.availableReplicas ?? 0) >= (d.spec.replicas ?? 1), latestRevision: d.metadata.annotations?.['deployment.kubernetes.io/revision'] })),
    ].sort((a, b) => a.name.localeCompare(b.name));
    return { namespace, functions };
  } catch (err) {
    throw clusterFailure(err);
  } finally {
    kube.close();
  }
}

/** The revision that serves now: the one with the most traffic. */
const serving = (ksvc: Service): string | undefined => [...(ksvc.status?.traffic ?? [])].sort((a, b) => (b.percent ?? 0) - (a.percent ?? 0))[0]?.revisionName ?? ksvc.status?.latestReadyRevisionName;

/** The ready revision `to` names, else the newest ready one older than the one serving. */
export function rollbackTarget(ksvc: Service, revisions: RevisionLine[], to?: string): string {
  const name = ksvc.metadata.name;
  if (to !== undefined) {
    const found = revisions.find((r) => r.name === to);
    if (!found) throw new CommandError(`Knative Service ${name} has no revision ${to}; its revisions: ${revisions.map((r) => r.name).join(', ') || 'none'}.`);
    if (!found.ready) throw new CommandError(`Revision ${to} of ${name} is not ready, so it cannot take the traffic; pick a ready one (func-runtime describe lists them).`);
    return to;
  }
  const current = serving(ksvc);
  const at = revisions.find((r) => r.name === current);
  const before = revisions.find((r) => r.ready && r.name !== current && (!at || r.generation < at.generation));
  if (!before) throw new CommandError(`Knative Service ${name} has no ready revision before ${current ?? 'the one serving'} to roll back to.`);
  return before.name;
}

export interface TrafficResult {
  name: string;
  namespace: string;
  /** The revision that served most before. */
  from?: string;
  traffic: TrafficTarget[];
}

/** `rev=percent` / `@latest=percent` (kn's `--traffic` form) as traffic targets summing to 100. */
export function parseSplit(specs: string[], revisions: RevisionLine[], name: string): TrafficTarget[] {
  const targets = specs.map((spec): TrafficTarget => {
    const m = /^(@latest|[a-z0-9]([-a-z0-9]*[a-z0-9])?)=(\d{1,3})$/.exec(spec);
    if (!m || Number(m[3]) > 100) throw new CommandError(`--split "${spec}" is not <revision>=<percent> or @latest=<percent> (a percent 0–100).`);
    const percent = Number(m[3]);
    if (m[1] === '@latest') return { latestRevision: true, percent };
    if (!revisions.some((r) => r.name === m[1])) throw new CommandError(`Knative Service ${name} has no revision ${m[1]}; its revisions: ${revisions.map((r) => r.name).join(', ') || 'none'}.`);
    return { revisionName: m[1], percent };
  });
  const sum = targets.reduce((n, t) => n + (t.percent ?? 0), 0);
  if (sum !== 100) throw new CommandError(`Traffic targets sum to ${sum}, want 100: --split ${specs.join(' --split ')}.`);
  return targets;
}

/**
 * Sets the Knative Service's `spec.traffic` to what `choose` picks from its revisions and waits (up
 * to `timeoutMs`) until its Route serves that split.
 */
export async function setTraffic(opts: TargetOptions & { timeoutMs: number }, choose: (ksvc: Service, revisions: RevisionLine[]) => TrafficTarget[]): Promise<TrafficResult> {
  const target = await resolveTarget(opts);
  const { kube } = target.cluster;
  const { name, namespace } = target;
  const t = await types();
  try {
    const ksvc = await kube.get<Service>(t.knativeServices, name, { namespace }).catch((err: { code?: number }) => {
      if (err.code === 404) throw new CommandError(`No Knative Service ${name} in namespace ${namespace}: traffic moves between a Knative Service's revisions (deploy it to a cluster that serves Knative Services).`);
      throw err;
    });
    const wanted = choose(ksvc, await revisionsOf(kube, ksvc));
    const updated = await kube.patch<Service>(t.knativeServices, name, { spec: { traffic: wanted } }, { namespace, type: 'merge', fieldManager: 'func-traffic' });
    const traffic = await waitForTraffic(kube, name, namespace, wanted, updated.metadata.generation ?? 0, opts.timeoutMs);
    return { name, namespace, from: serving(ksvc), traffic };
  } catch (err) {
    throw clusterFailure(err);
  } finally {
    kube.close();
  }
}

/** Percent per revision name, `latestRevision` targets counted as the latest ready revision. */
const shares = (targets: TrafficTarget[], latest: string | undefined): Map<string, number> => {
  const out = new Map<string, number>();
  for (const x of targets) {
    const rev = x.latestRevision ? latest : x.revisionName;
    if (rev && x.percent) out.set(rev, (out.get(rev) ?? 0) + x.percent);
  }
  return out;
};

async function waitForTraffic(kube: KubeClient, name: string, namespace: string, wanted: TrafficTarget[], generation: number, timeoutMs: number): Promise<TrafficTarget[]> {
  const t = await types();
  const deadline = Date.now() + timeoutMs;
  for (let delay = 50; ; delay = Math.min(delay * 2, 500)) {
    const ksvc = await kube.get<Service>(t.knativeServices, name, { namespace });
    const traffic = ksvc.status?.traffic ?? [];
    const want = shares(wanted, ksvc.status?.latestReadyRevisionName);
    const have = shares(traffic.map((x) => ({ ...x, latestRevision: false })), undefined);
    if ((ksvc.status?.observedGeneration ?? 0) >= generation && have.size === want.size && [...want].every(([rev, p]) => have.get(rev) === p)) return traffic;
    if (Date.now() > deadline) throw new CommandError(`Knative Service ${name}'s Route did not serve the traffic asked for within ${Math.round(timeoutMs / 1000)} s (its status.traffic: ${JSON.stringify(traffic)}).`);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
