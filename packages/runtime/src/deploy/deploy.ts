/**
 * `func-runtime deploy [path]`, a documented pipeline:
 *
 *   func.yaml (checked) ─▶ cluster: kubeconfig, what it serves ─┐
 *                       └▶ image: bundle → layout → push ───────┴▶ manifests ─▶ references exist?
 *   ─▶ apply (Deployment + Service, or a Knative Service) ─▶ wait for the rollout (progress)
 *   ─▶ Triggers ─▶ func.yaml gets image / imageDigest / deploy.namespace ─▶ where it answers
 *
 * Nothing in the cluster changes until the image exists and every check passed, so a bad
 * func.yaml, an unreachable cluster, a registry that refuses the push or a source that does not
 * build leaves the running version as it was. A rollout that fails (the new pods cannot pull or
 * start) puts the previous pod template back; its pods never stopped serving.
 */
import type { KubeClient } from '@func/kube-client';
import { CommandError } from '../command-error.js';
import type { ImageFlags } from '../commands/deploy-flags.js';
import { buildFunctionImageFromSource, type BuiltFunctionImage } from '../image/build-image.js';
import { resolveImageRequest } from '../image/image-options.js';
import { loadProject, type FunctionProject } from '../project.js';
import { apply, applyRaw, checkReferences, ownerOf, previousDeployment, rollBack, syncTriggers } from './apply.js';
import { clusterFailure, connect, namespaceFor, serves, type Cluster, type ClusterOptions } from './cluster.js';
import { LocalRegistryHosting, localRegistry } from './local-registry.js';
import { recordDeployment } from './func-yaml-update.js';
import { knativeServiceManifest } from './knative-service.js';
import type { Deployment, Manifest, Service } from './kube-types.js';
import { CONTAINER_NAME, rawManifests } from './manifests.js';
import { progressDisplay, steps } from './progress.js';
import { waitForRollout, type RolloutState } from './rollout.js';
import { triggerManifests } from './triggers.js';
import { whereItAnswers, type Where } from './where.js';

export interface DeployOptions extends ImageFlags, ClusterOptions {
  path: string;
  /** Knative func's `--deployer`: `knative` (a Knative Service; the default where the cluster serves them) or `raw` (a Deployment and a Service). */
  deployer?: 'knative' | 'raw';
  dryRun: boolean;
  wait: boolean;
  timeoutSeconds: number;
  env: NodeJS.ProcessEnv;
  /** Progress and notes (stderr); the result goes to the caller. */
  log: NodeJS.WriteStream;
}

export interface Capabilities {
  knative: boolean;
  triggers: boolean;
  /** The cluster assigns pods' uids (it serves OpenShift's SecurityContextConstraints). */
  uidAssigned: boolean;
}

export interface Planned {
  project: FunctionProject;
  namespace: string;
  kind: 'Deployment' | 'KnativeService';
  manifests: Manifest[];
  image: BuiltFunctionImage;
  capabilities: Capabilities;
}

export interface DeployResult extends Planned {
  rollout?: RolloutState;
  where?: Where;
  triggers?: { applied: string[]; deleted: string[] };
  ms: number;
}

async function capabilities(kube: KubeClient, deployer: DeployOptions['deployer']): Promise<Capabilities> {
  const [apps, knative, triggers, uidAssigned] = await Promise.all([serves(kube, 'apps/v1', 'deployments'), serves(kube, 'serving.knative.dev/v1', 'services'), serves(kube, 'eventing.knative.dev/v1', 'triggers'), serves(kube, 'security.openshift.io/v1', 'securitycontextconstraints')]);
  if (!apps && !knative) throw new CommandError('The cluster serves neither apps/v1 Deployments nor Knative Services: there is nothing to run the function with.');
  if (deployer === 'knative' && !knative) throw new CommandError('--deployer knative: the cluster does not serve serving.knative.dev/v1 Services (install Knative Serving, or use the local cluster, which serves them); --deployer raw deploys a Deployment and a Service.');
  if (deployer === 'raw' && !apps) throw new CommandError('--deployer raw: the cluster does not serve apps/v1 Deployments; deploy a Knative Service instead (--deployer knative).');
  return { knative: deployer ? deployer === 'knative' : knative, triggers, uidAssigned };
}

function manifestsFor(planned: Omit<Planned, 'manifests' | 'kind'>, env: NodeJS.ProcessEnv) {
  const input = { project: planned.project, namespace: planned.namespace, image: planned.image.pinned, localEnv: env, uidAssigned: planned.capabilities.uidAssigned };
  if (planned.capabilities.knative) {
    const { service, references } = knativeServiceManifest(input);
    return { kind: 'KnativeService' as const, objects: [service], references };
  }
  const { deployment, service, autoscaler, warnings, references } = rawManifests(input);
  return { kind: 'Deployment' as const, objects: [deployment, service, ...(autoscaler ? [autoscaler] : [])] as Manifest[], references, warnings };
}

function triggersFor(planned: Planned, owner?: Deployment): Manifest[] {
  const subscriber = planned.kind === 'KnativeService' ? { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: planned.project.name } : { apiVersion: 'v1', kind: 'Service', name: planned.project.name };
  return triggerManifests({ project: planned.project, namespace: planned.namespace, subscriber, owner: owner ? ownerOf(owner) : undefined });
}

/**
 * A dry run needs no cluster: without a kubeconfig it plans a Deployment + Service (and the
 * Triggers func.yaml asks for) in func.yaml's namespace, as an offline `kubectl apply` would take.
 */
async function clusterForPlan(opts: DeployOptions, project: FunctionProject): Promise<Cluster | undefined> {
  try {
    return await connect(opts, project);
  } catch (err) {
    if (opts.dryRun) return undefined;
    throw err;
  }
}

/** Everything up to the first change in the cluster: checks, image, manifests. */
export async function plan(opts: DeployOptions): Promise<{ planned: Planned; cluster?: Cluster }> {
  // What every deploy loads, loaded while func.yaml is read and checked.
  const [project] = await Promise.all([loadProject(opts.path), import('@func/oci'), import('@func/kube-client'), import('esbuild')]);
  const cluster = await clusterForPlan(opts, project);
  const local = cluster && !opts.dryRun ? await localRegistry(cluster.kube) : undefined;
  const request = await resolveImageRequest(project, opts, { pushByDefault: !opts.dryRun, env: opts.env, localRegistry: local });
  // The build starts at once, but discovery is awaited first: an unreachable cluster is reported
  // as such even when the source does not build either.
  const building = buildFunctionImageFromSource(request, steps(opts.log));
  building.catch(() => undefined);
  const caps: Capabilities = cluster ? await capabilities(cluster.kube, opts.deployer) : { knative: opts.deployer === 'knative', triggers: (project.doc.deploy?.subscriptions?.length ?? 0) > 0, uidAssigned: false };
  if (cluster && !request.push && request.storeSource === 'project' && !opts.dryRun) {
    throw new CommandError(`The cluster at ${cluster.server} advertises no image registry (no ConfigMap ${LocalRegistryHosting.namespace}/${LocalRegistryHosting.name}, which the local cluster publishes), and ${request.ref} is not pushed to a registry. Pass --registry <host>/<user> (a registry the cluster pulls from), or --images <dir> with the node's image layout.`);
  }
  const image = await building;
  if (image.typecheck?.status === 'skipped') opts.log.write(`func-runtime: not type-checked: ${image.typecheck.reason}\n`);
  const base = { project, namespace: cluster?.namespace ?? namespaceFor(project, opts.namespace, 'default'), image, capabilities: caps };
  const { kind, objects, references, warnings } = manifestsFor(base, opts.env);
  for (const w of warnings ?? []) opts.log.write(`func-runtime: ${w}\n`);
  const planned: Planned = { ...base, kind, manifests: objects };
  if (cluster && !opts.dryRun) await checkReferences(cluster.kube, base.namespace, references, project.doc.deploy?.serviceAccountName).catch((err) => Promise.reject(clusterFailure(err)));
  if (caps.triggers) planned.manifests.push(...triggersFor(planned));
  else if (project.doc.deploy?.subscriptions?.length) opts.log.write(`func-runtime: func.yaml deploy.subscriptions: the cluster does not serve eventing.knative.dev/v1 Triggers (install Knative Eventing's CRDs, or run the local cluster's broker); no Trigger is made\n`);
  return { planned, cluster };
}

async function rollout(cluster: Cluster, planned: Planned, opts: DeployOptions): Promise<RolloutState> {
  const display = progressDisplay(opts.log, planned.image.pinned);
  const state = await waitForRollout(cluster.kube, { kind: planned.kind, name: planned.project.name, namespace: planned.namespace, image: planned.image.pinned, timeoutMs: opts.timeoutSeconds * 1000, onProgress: (s) => display.update(s) });
  display.end();
  if (state.done) return state;
  const f = state.failure;
  const why = f ? `pod ${f.pod}: ${f.reason}${f.message ? ` — ${f.message}` : ''}` : `not available after ${opts.timeoutSeconds} s (${state.available}/${state.desired} ready)`;
  const log = f ? await lastLogLines(cluster.kube, f.pod, planned.namespace) : '';
  throw new CommandError(`The new version of ${planned.project.name} did not become ready: ${why}.${log ? ` Its log ends: ${log}` : ''}`);
}

/** The end of a failed pod's log (the runtime says why it could not start in its last lines), on one line. */
async function lastLogLines(kube: KubeClient, pod: string, namespace: string): Promise<string> {
  for (const previous of [false, true]) {
    try {
      let text = '';
      for await (const chunk of await kube.logs(pod, { namespace, container: CONTAINER_NAME, tailLines: 3, previous, limitBytes: 4096 })) text += String(chunk);
      const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
      if (lines.length) return lines.join(' | ');
    } catch {
      // no log (yet): the reason alone is what there is
    }
  }
  return '';
}

export async function deploy(opts: DeployOptions): Promise<DeployResult> {
  const started = performance.now();
  const { planned, cluster } = await plan({ ...opts, dryRun: false });
  const { kube } = cluster!;
  const { Resources } = await import('@func/kube-client');
  const [workload, service] = planned.manifests;
  const previous = planned.kind === 'Deployment' ? await previousDeployment(kube, planned.project.name, planned.namespace) : undefined;
  // A Knative Route keeps serving the latest ready revision while a new one fails: nothing to put back.
  const serving = planned.kind === 'KnativeService' ? await kube.get<Service>(Resources.knativeServices, planned.project.name, { namespace: planned.namespace }).then((k) => k.status?.latestReadyRevisionName, () => undefined) : undefined;
  const progress = steps(opts.log);
  const autoscaler = planned.manifests.find((m) => m.kind === 'HorizontalPodAutoscaler');
  const owner = await progress.run('applying', planned.kind === 'Deployment' ? applyRaw(kube, workload as Deployment, service!, autoscaler) : apply(kube, Resources.knativeServices, workload!)).catch((err) => Promise.reject(clusterFailure(err)));
  opts.log.write(`func-runtime: applied ${planned.kind === 'Deployment' ? (autoscaler ? 'Deployment, Service and HorizontalPodAutoscaler' : 'Deployment and Service') : 'Knative Service'} ${planned.namespace}/${planned.project.name} (image ${planned.image.pinned})\n`);
  let state: RolloutState | undefined;
  if (opts.wait) {
    try {
      state = await rollout(cluster!, planned, opts);
    } catch (err) {
      if (previous) {
        await rollBack(kube, previous);
        throw new CommandError(`${(err as Error).message} The previous version is still serving (its pod template was put back).`);
      }
      if (serving) throw new CommandError(`${(err as Error).message} The previous revision ${serving} is still serving.`);
      throw err;
    }
  }
  const triggers = planned.capabilities.triggers ? await progress.run('applying Triggers', syncTriggers(kube, planned.project.name, planned.namespace, triggersFor(planned, planned.kind === 'Deployment' ? (owner as Deployment) : undefined))) : undefined;
  recordDeployment(planned.project.file, { image: planned.image.ref, imageDigest: planned.image.digest, namespace: planned.namespace });
  const readiness = planned.project.doc.deploy?.healthEndpoints?.readiness ?? '/health/readiness';
  const where = opts.wait ? await progress.run('finding where it answers', whereItAnswers(kube, { kind: planned.kind, name: planned.project.name, namespace: planned.namespace, readinessPath: readiness, settleMs: 5000 })) : undefined;
  kube.close();
  return { ...planned, rollout: state, where, triggers, ms: Math.round(performance.now() - started) };
}
