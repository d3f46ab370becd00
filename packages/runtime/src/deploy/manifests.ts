/**
 * func.yaml → the objects `deploy` applies, as Knative func's raw deployer (pkg/k8s/deployer.go)
 * generates them: a Deployment and a ClusterIP Service named after the function, labelled
 * `function.knative.dev: "true"`, `function.knative.dev/name`, `function.knative.dev/runtime` (the
 * selector: those three only, as they never change) plus func.yaml's labels, annotated with
 * func.yaml's annotations and `function.knative.dev/deployer: raw`; one container `user-container`
 * on port 8080 with probes on `deploy.healthEndpoints`, Knative's restricted security context,
 * `deploy.options.resources`, `serviceAccountName`; replicas from `deploy.options.scale`. Pure:
 * the same func.yaml and image give the same objects.
 *
 * `scale` on this path (a cluster without Knative Serving): `max` above `min` makes an
 * autoscaling/v2 HorizontalPodAutoscaler beside the Deployment (min to max, CPU at 80 % of the
 * request, Kubernetes' default target), which then keeps the replica count (the Deployment names
 * none); `min: 0` cannot be honoured without Knative (the Deployment keeps 1) and `metric`, `target`
 * and `utilization` are Knative's request-based settings, which no resource metric measures: each
 * is a warning, never silently dropped.
 *
 * Departures, each for the local stack and written down in the README: readiness is probed every
 * second (a rollout moves on as soon as a replica can serve; Kubernetes' default is 10 s), and the
 * pod runs as uid 1000 so that an image on a base without a USER passes `runAsNonRoot`.
 */
import { CommandError } from '../command-error.js';
import type { FunctionProject } from '../project.js';
import { containerEnv, containerVolumes, noReferences, type References } from './envs.js';
import type { Container, Deployment, Manifest, Service } from './kube-types.js';

export const FUNCTION_PORT = 8080;
export const SERVICE_PORT = 80;
export const CONTAINER_NAME = 'user-container';
export const NAME_LABEL = 'function.knative.dev/name';
export const DEPLOYER_ANNOTATION = 'function.knative.dev/deployer';

export interface ManifestInput {
  project: FunctionProject;
  namespace: string;
  /** The image pinned to its digest. */
  image: string;
  /** Where `{{ env:NAME }}` values come from. */
  localEnv: NodeJS.ProcessEnv;
  /** The cluster gives the pod its uid (OpenShift's SecurityContextConstraints: from the namespace's range), so none is asked for. */
  uidAssigned?: boolean;
}

export interface Identity {
  labels: Record<string, string>;
  selector: Record<string, string>;
  annotations: Record<string, string>;
}

/** Labels and annotations every object of the function carries; identity keys win over func.yaml's. */
export function identity(project: FunctionProject, deployer: 'raw' | 'knative'): Identity {
  const selector = { 'function.knative.dev': 'true', [NAME_LABEL]: project.name, 'function.knative.dev/runtime': project.doc.runtime ?? '' };
  const user = Object.fromEntries((project.doc.deploy?.labels ?? []).map((l) => [l.key, l.value ?? '']));
  return { labels: { ...user, ...selector }, selector, annotations: { ...project.doc.deploy?.annotations, [DEPLOYER_ANNOTATION]: deployer } };
}

/** Knative Serving reserves PORT; so does this deployer: the Service, the probes and the image agree on 8080. */
function checkPort(project: FunctionProject): void {
  for (const e of project.doc.run?.envs ?? []) {
    if ((e.name === 'PORT' || e.name === 'FUNC_PORT') && e.value !== String(FUNCTION_PORT)) {
      throw new CommandError(`func.yaml run.envs sets ${e.name}=${e.value ?? ''}, which conflicts with the function's port: the image listens on ${FUNCTION_PORT}, and the Service and the health probes send there. Remove ${e.name} from run.envs (the platform sets PORT, as Knative does), then deploy again.`);
    }
  }
}

/** The CPU utilization a raw function's autoscaler targets (autoscaling/v2's default). */
export const AUTOSCALER_CPU_UTILIZATION = 80;

interface RawScale {
  /** The Deployment's count; absent when the autoscaler keeps it. */
  replicas?: number;
  autoscaler?: { min: number; max: number };
  warnings: string[];
}

/** func.yaml's `scale`, refused when `min` is above `max` (both deployers). */
export function checkedScale(project: FunctionProject): NonNullable<NonNullable<FunctionProject['doc']['deploy']>['options']>['scale'] {
  const scale = project.doc.deploy?.options?.scale;
  if (scale?.max && (scale.min ?? 1) > scale.max) throw new CommandError(`func.yaml deploy.options.scale: min (${scale.min}) is above max (${scale.max}); set min ≤ max.`);
  return scale;
}

function rawScale(project: FunctionProject): RawScale {
  const scale = checkedScale(project);
  const warnings: string[] = [];
  if (scale?.min === 0) warnings.push('func.yaml deploy.options.scale.min is 0, but scaling to zero needs Knative Serving, which this deploy does not use: the Deployment keeps at least 1 replica. Deploy with --deployer knative (the local cluster serves Knative) to scale to zero.');
  const min = Math.max(scale?.min ?? 1, 1);
  const knativeOnly = (['metric', 'target', 'utilization'] as const).filter((k) => scale?.[k] !== undefined);
  if (knativeOnly.length) warnings.push(`func.yaml deploy.options.scale.${knativeOnly.join(', ')}: Knative's request-based autoscaling (concurrency or requests per second), which a Deployment's HorizontalPodAutoscaler cannot measure: ignored here${scale?.max && scale.max > min ? `; the autoscaler scales on CPU (${AUTOSCALER_CPU_UTILIZATION} % of the request)` : ''}. Deploy with --deployer knative to use ${knativeOnly.length === 1 ? 'it' : 'them'}.`);
  if (!scale?.max || scale.max <= min) return { replicas: min, warnings };
  if (!project.doc.deploy?.options?.resources?.requests?.cpu) warnings.push(`func.yaml deploy.options.scale.max: the HorizontalPodAutoscaler scales on CPU utilization, a share of the container's CPU request, and deploy.options.resources.requests.cpu is not set: it cannot compute one until it is.`);
  return { autoscaler: { min, max: scale.max }, warnings };
}

function resources(project: FunctionProject): Container['resources'] | undefined {
  const r = project.doc.deploy?.options?.resources;
  const pick = (o: Record<string, unknown> | undefined) => Object.fromEntries(Object.entries(o ?? {}).filter(([k, v]) => (k === 'cpu' || k === 'memory') && typeof v === 'string')) as Record<string, string>;
  const requests = pick(r?.requests);
  const limits = pick(r?.limits);
  if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) return undefined;
  return { ...(Object.keys(requests).length ? { requests } : {}), ...(Object.keys(limits).length ? { limits } : {}) };
}

export const RESTRICTED = { runAsNonRoot: true, runAsUser: 1000, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };
const { runAsUser: _uid, ...withoutUid } = RESTRICTED;

/** The function's container and volumes, shared by the Deployment and the Knative Service. */
export function functionContainer(input: ManifestInput, refs: References, port: number | undefined): { container: Container; volumes: ReturnType<typeof containerVolumes>['volumes'] } {
  const { project } = input;
  checkPort(project);
  const { env, envFrom } = containerEnv(project.doc.run?.envs, input.localEnv, refs);
  const { volumes, mounts } = containerVolumes(project.doc.run?.volumes, refs);
  const health = project.doc.deploy?.healthEndpoints;
  const probe = (path: string, periodSeconds?: number) => ({ httpGet: { path, ...(port ? { port } : {}) }, ...(periodSeconds ? { periodSeconds } : {}) });
  const res = resources(project);
  const container: Container = {
    name: CONTAINER_NAME,
    image: input.image,
    ...(port ? { ports: [{ containerPort: port, protocol: 'TCP' }] } : {}),
    ...(env.length ? { env } : {}),
    ...(envFrom.length ? { envFrom } : {}),
    ...(mounts.length ? { volumeMounts: mounts } : {}),
    livenessProbe: probe(health?.liveness ?? '/health/liveness'),
    readinessProbe: probe(health?.readiness ?? '/health/readiness', port ? 1 : undefined),
    ...(res ? { resources: res } : {}),
    securityContext: input.uidAssigned ? withoutUid : RESTRICTED,
  };
  return { container, volumes };
}

export interface RawManifests {
  deployment: Deployment;
  service: Service;
  /** The autoscaling/v2 HorizontalPodAutoscaler, when func.yaml's scale.max is above its min. */
  autoscaler?: Manifest;
  /** What of func.yaml this path cannot honour, for the user. */
  warnings: string[];
  references: References;
}

export function rawManifests(input: ManifestInput): RawManifests {
  const { project, namespace } = input;
  const id = identity(project, 'raw');
  const references = noReferences();
  const { container, volumes } = functionContainer(input, references, FUNCTION_PORT);
  const metadata = { name: project.name, namespace, labels: id.labels, annotations: id.annotations };
  const scale = rawScale(project);
  const deployment: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata,
    spec: {
      ...(scale.replicas !== undefined && { replicas: scale.replicas }),
      selector: { matchLabels: id.selector },
      template: {
        metadata: { labels: id.labels, annotations: id.annotations },
        spec: {
          containers: [container],
          ...(project.doc.deploy?.serviceAccountName ? { serviceAccountName: project.doc.deploy.serviceAccountName } : {}),
          ...(volumes.length ? { volumes } : {}),
        },
      },
    },
  };
  const service: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata,
    spec: { type: 'ClusterIP', selector: id.selector, ports: [{ name: 'http', port: SERVICE_PORT, targetPort: FUNCTION_PORT, protocol: 'TCP' }] },
  };
  const autoscaler: Manifest | undefined = scale.autoscaler && {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata,
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: project.name },
      minReplicas: scale.autoscaler.min,
      maxReplicas: scale.autoscaler.max,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: AUTOSCALER_CPU_UTILIZATION } } }],
    },
  };
  return { deployment, service, ...(autoscaler && { autoscaler }), warnings: scale.warnings, references };
}
