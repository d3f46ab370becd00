/**
 * Knative's Revision reconciler: a Revision runs as a Deployment `<revision>-deployment`, made at
 * the revision's initial scale (its `initial-scale` and `min-scale`, config-autoscaler's) whose
 * replicas the autoscaler (serving-autoscaler) sets from then on (a revision whose initial scale
 * is 0, as `allow-zero-initial-scale` permits, is Ready at once with no pod, as Knative's: its
 * first request wakes it through the activator), and is reached through a Service `<revision>` (port 80 to the
 * container's port, as Knative's private service), both controlled by it and labelled
 * `serving.knative.dev/{service,configuration,revision,revisionUID}`. The user container gets the
 * environment of Knative's runtime contract (`PORT`, `K_SERVICE`, `K_CONFIGURATION`, `K_REVISION`)
 * and, unless it has one, a TCP readiness probe on its port (the queue-proxy's default). Status as
 * Knative's: ResourcesAvailable once a pod is ready and is an endpoint of the revision's Service
 * (False when the Deployment's progress deadline passed), ContainerHealthy False when its container cannot start or keeps exiting, Ready both.
 */
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { ensureChild } from '../../serving/children.js';
import { derivative } from '../../sources/derivative.js';
import { conditionOf, conditionSet, type Marked } from '../../serving/conditions.js';
import { AutoscalerConfigMap, autoscalerConfig, scalingSpec } from '../../serving/autoscaling/config.js';
import { Annotation, controlledBy, DefaultTimeoutSeconds, Kinds, Label, type Obj, type ServingEnv } from '../../serving/kinds.js';

/** Knative's user-port default (the runtime contract's $PORT). */
export const DefaultPort = 8080;
/** What a revision's spec holds beside the pod spec. */
const RevisionOnly = ['containerConcurrency', 'timeoutSeconds', 'responseStartTimeoutSeconds', 'idleTimeoutSeconds'];
/** Why a container is not running that will not mend by waiting. */
const Unhealthy = new Set(['ImagePullBackOff', 'ErrImagePull', 'CrashLoopBackOff', 'CreateContainerConfigError', 'CreateContainerError', 'InvalidImageName']);

export const deploymentName = (rev: string): string => `${rev}-deployment`;

/** How long a stopping function pod keeps its listener open after SIGTERM (FUNC_DRAIN_DELAY). */
const DrainDelayMs = 1000;
const timeoutSeconds = (rev: Obj): number => rev.spec?.timeoutSeconds ?? DefaultTimeoutSeconds;

/** What the route controller and the autoscaler mark on a Revision as traffic moves: not the pods' (a change would roll them). */
const Routing = new Set<string>([Label.routingState, Annotation.routes, Annotation.routingStateModified, Annotation.serviceMode]);
const withoutRouting = (m: Record<string, string> | undefined): Record<string, string> => Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !Routing.has(k)));

/** The port the user container listens on: its containerPort, else 8080. */
export const userPort = (rev: Obj): number => rev.spec?.containers?.[0]?.ports?.[0]?.containerPort ?? DefaultPort;

/** A probe without a port probes the user container's (Knative defaults every probe so). */
export const withPort = (given: any, port: number) => {
  const p = structuredClone(given);
  const handler = p?.httpGet ?? p?.tcpSocket ?? p?.grpc;
  if (handler && handler.port === undefined) handler.port = port;
  return p;
};

/** The user container's readiness probe as its pods get it: its own, or a TCP probe on its port (the queue-proxy's default). */
export const readinessProbe = (rev: Obj): any => withPort(rev.spec?.containers?.[0]?.readinessProbe ?? { tcpSocket: { port: userPort(rev) }, periodSeconds: 1, successThreshold: 1 }, userPort(rev));

function podSpec(rev: Obj, labels: Record<string, string>): Record<string, unknown> {
  const port = userPort(rev);
  const spec = Object.fromEntries(Object.entries(rev.spec ?? {}).filter(([k]) => !RevisionOnly.includes(k)));
  const env = [
    { name: 'PORT', value: String(port) },
    { name: 'K_REVISION', value: rev.metadata.name! },
    { name: 'K_CONFIGURATION', value: labels[Label.configuration] ?? '' },
    { name: 'K_SERVICE', value: labels[Label.service] ?? '' },
    // The runtime is its own queue-proxy: it enforces the limit Knative gives queue-proxy.
    { name: 'CONTAINER_CONCURRENCY', value: String(rev.spec?.containerConcurrency ?? 0) },
  ];
  const containers = (spec.containers as Obj[] | undefined ?? []).map((c: any, i: number) => {
    if (i > 0) return c;
    const reserved = new Set(env.map((e) => e.name));
    // The function runtime is its own queue-proxy: it drains as queue-proxy does, keeping its
    // listener a moment after SIGTERM (the activator learns of the pod's end through the Endpoints)
    // and letting in-flight requests run up to the revision's timeout. Defaults: the user's win.
    const own = new Set((c.env ?? []).map((e: { name: string }) => e.name));
    const drain = [
      { name: 'FUNC_DRAIN_DELAY', value: String(DrainDelayMs) },
      { name: 'FUNC_SHUTDOWN_TIMEOUT', value: String(timeoutSeconds(rev) * 1000) },
    ].filter((e) => !own.has(e.name));
    return {
      ...c,
      ...(c.livenessProbe && { livenessProbe: withPort(c.livenessProbe, port) }),
      ...(c.startupProbe && { startupProbe: withPort(c.startupProbe, port) }),
      name: c.name || 'user-container',
      ports: [{ name: 'user-port', containerPort: port, protocol: 'TCP' }],
      env: [...(c.env ?? []).filter((e: Obj & { name: string }) => !reserved.has(e.name)), ...drain, ...env],
      readinessProbe: readinessProbe(rev),
    };
  });
  // As Knative: a pod being stopped may finish requests for as long as the revision lets one run.
  return { ...spec, containers, enableServiceLinks: spec.enableServiceLinks ?? false, terminationGracePeriodSeconds: spec.terminationGracePeriodSeconds ?? timeoutSeconds(rev) };
}

/** ContainerHealthy from the revision's pods: False (their reason) when one cannot run or keeps exiting. */
function containerHealth(pods: Obj[], ready: boolean): Marked {
  for (const pod of pods) {
    for (const cs of pod.status?.containerStatuses ?? []) {
      const waiting = cs.state?.waiting;
      if (waiting && Unhealthy.has(waiting.reason)) return { type: 'ContainerHealthy', status: 'False', reason: waiting.reason, message: waiting.message ?? waiting.reason };
      const last = cs.lastState?.terminated ?? cs.state?.terminated;
      if (last && last.exitCode !== 0 && !cs.ready) return { type: 'ContainerHealthy', status: 'False', reason: `ExitCode${last.exitCode}`, message: `Container failed with: ${last.message ?? last.reason ?? 'exit'}` };
    }
  }
  return ready ? { type: 'ContainerHealthy', status: 'True' } : { type: 'ContainerHealthy', status: 'Unknown', reason: 'Deploying' };
}

/**
 * ResourcesAvailable: True once a pod was ready and routable (the initial scale reached), and so
 * it stays while the autoscaler scales the revision down to zero and back, as Knative's does.
 */
function resources(deployment: Obj | undefined, endpoints: Obj | undefined, initialized: boolean): Marked {
  const routable = ((endpoints as { subsets?: { addresses?: unknown[] }[] } | undefined)?.subsets ?? []).some((s) => (s.addresses ?? []).length > 0);
  if (((deployment?.status?.readyReplicas ?? 0) > 0 && routable) || initialized) return { type: 'ResourcesAvailable', status: 'True' };
  const stuck = (deployment?.status?.conditions ?? []).find((c: Obj & { type: string; reason?: string }) => c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded');
  if (stuck) return { type: 'ResourcesAvailable', status: 'False', reason: 'ProgressDeadlineExceeded', message: `Initial scale was never achieved` };
  return { type: 'ResourcesAvailable', status: 'Unknown', reason: 'Deploying' };
}

/** Active (Knative's PodAutoscaler condition, informational on the Revision): pods ready, coming up, or none wanted. */
function active(deployment: Obj | undefined): Marked {
  const want = deployment?.spec?.replicas ?? 0;
  if ((deployment?.status?.readyReplicas ?? 0) > 0) return { type: 'Active', status: 'True' };
  if (want === 0) return { type: 'Active', status: 'False', reason: 'NoTraffic', message: 'The target is not receiving traffic.' };
  return { type: 'Active', status: 'Unknown', reason: 'Activating', message: 'Pods are starting.' };
}

export function startRevisionController(env: ServingEnv): Controller {
  const revisions = env.cache('revisions');
  const deployments = env.cache('deployments');
  const pods = env.cache('pods');
  const endpoints = env.cache('endpoints');
  const configMaps = env.cache('configMaps');
  env.cache('k8sServices');

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const rev = revisions.get(namespace, name) as Obj | undefined;
    if (!rev || rev.metadata.deletionTimestamp) return;
    const uid = rev.metadata.uid!;
    const annotations = withoutRouting(rev.metadata.annotations);
    const labels: Record<string, string> = {
      ...withoutRouting(rev.metadata.labels),
      [Label.revision]: name,
      [Label.revisionUID]: uid,
      app: name,
    };
    const owner = [controlledBy(rev, Kinds.revisions)];
    const port = userPort(rev);
    // The autoscaler owns the replicas once the Deployment exists; it starts at the initial scale.
    const existing = deployments.get(namespace, deploymentName(name)) as Obj | undefined;
    const config = autoscalerConfig((configMaps.get(AutoscalerConfigMap.namespace, AutoscalerConfigMap.name) as Obj & { data?: Record<string, string> } | undefined)?.data).value;
    const scaling = scalingSpec(rev.metadata.annotations, rev.spec?.containerConcurrency, config).value;
    const initialScale = Math.max(scaling.initialScale, scaling.minScale);
    const deployment = await ensureChild(env, 'deployments', rev, {
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name: deploymentName(name), namespace, labels, annotations, ownerReferences: owner },
      spec: {
        replicas: existing?.spec?.replicas ?? (scaling.maxScale > 0 ? Math.min(initialScale, scaling.maxScale) : initialScale),
        selector: { matchLabels: { [Label.revisionUID]: uid } },
        progressDeadlineSeconds: 600,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '100%' } },
        template: { metadata: { labels, annotations }, spec: podSpec(rev, labels) },
      },
    // As Knative's checkAndUpdateDeployment: DeepDerivative, so what the API server defaulted in the
    // spec (revisionHistoryLimit, dnsPolicy, a container's terminationMessagePath …) is no change.
    }, ['spec'], derivative);
    const service = await ensureChild(env, 'k8sServices', rev, {
      apiVersion: 'v1', kind: 'Service',
      metadata: { name, namespace, labels, ownerReferences: owner },
      spec: { selector: { [Label.revisionUID]: uid }, ports: [{ name: 'http', port: 80, targetPort: port, protocol: 'TCP' }] },
    }, []);
    const d = deployment.ok ? deployment.object : undefined;
    // Knative's ScaleTargetInitialized: the initial scale reached once — at once when it is 0 and
    // the revision's Service is there (0 ready of 0 wanted) — and kept while scaled to zero and back.
    const initialized = (initialScale === 0 && service.ok)
      || (conditionOf(rev, 'ResourcesAvailable')?.status === 'True' && conditionOf(rev, 'ContainerHealthy')?.status === 'True');
    const ready = (d?.status?.readyReplicas ?? 0) > 0 || initialized;
    const marked: Marked[] = [
      containerHealth(pods.list(namespace).filter((p) => p.metadata.labels?.[Label.revisionUID] === uid) as Obj[], ready),
      !deployment.ok ? { type: 'ResourcesAvailable', status: 'False', reason: 'NotOwned', message: deployment.message }
        : !service.ok ? { type: 'ResourcesAvailable', status: 'False', reason: 'NotOwned', message: service.message }
          : resources(d, endpoints.get(namespace, name) as Obj | undefined, initialized),
    ];
    await writeStatus({ store: env.store('revisions'), cache: revisions }, rev, {
      observedGeneration: rev.metadata.generation,
      conditions: conditionSet(rev.status?.conditions, marked, [active(d)]),
      actualReplicas: d?.status?.readyReplicas ?? 0,
      desiredReplicas: d?.spec?.replicas ?? 1,
      containerStatuses: (rev.spec?.containers ?? []).map((c: Obj & { name?: string }, i: number) => ({ name: c.name || (i === 0 ? 'user-container' : `container-${i}`) })),
    });
  };

  const byLabel = (o: Obj) => {
    const rev = o.metadata.labels?.[Label.revision];
    return rev ? [`${o.metadata.namespace}/${rev}`] : [];
  };
  return startReconciler('serving-revision-controller', reconcile, [
    { cache: revisions, keys: (o) => [objectKey(o)] },
    { cache: deployments, keys: byLabel },
    { cache: pods, keys: byLabel },
    // A revision's Service has its name, and so have the Service's Endpoints.
    { cache: endpoints, keys: (o) => (revisions.get(o.metadata.namespace, o.metadata.name!) ? [objectKey(o)] : []) },
  ], { log: env.ctx.log });
}
