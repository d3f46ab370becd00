/**
 * The `serving.knative.dev/v1` Service `deploy` applies instead of a Deployment + Service when the
 * cluster serves that kind (a real Knative), as Knative func's knative deployer writes it: the same
 * labels, annotations, container, env and volumes as the raw manifests; scale as the autoscaler's
 * annotations on the revision template; `limits.concurrency` as containerConcurrency. Knative
 * assigns the port and routes by readiness, so the probes name paths only.
 */
import type { FunctionProject } from '../project.js';
import { noReferences, type References } from './envs.js';
import type { Manifest } from './kube-types.js';
import { checkedScale, functionContainer, identity, type ManifestInput } from './manifests.js';

/** func.yaml `scale` as the revision's autoscaling annotations, as given: `min: 0` is scale to zero. */
function autoscaling(project: FunctionProject): Record<string, string> {
  const scale = checkedScale(project) ?? {};
  const out: Record<string, string> = {};
  if (scale.min !== undefined) out['autoscaling.knative.dev/min-scale'] = String(scale.min);
  if (scale.max !== undefined) out['autoscaling.knative.dev/max-scale'] = String(scale.max);
  if (scale.metric !== undefined) out['autoscaling.knative.dev/metric'] = scale.metric;
  if (scale.target !== undefined) out['autoscaling.knative.dev/target'] = String(scale.target);
  if (scale.utilization !== undefined) out['autoscaling.knative.dev/target-utilization-percentage'] = String(scale.utilization);
  return out;
}

export function knativeServiceManifest(input: ManifestInput): { service: Manifest; references: References } {
  const { project, namespace } = input;
  const id = identity(project, 'knative');
  const references = noReferences();
  const { container, volumes } = functionContainer(input, references, undefined);
  const concurrency = project.doc.deploy?.options?.resources?.limits?.concurrency;
  const service: Manifest = {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name: project.name, namespace, labels: id.labels, annotations: id.annotations },
    spec: {
      template: {
        metadata: { labels: id.labels, annotations: { ...id.annotations, ...autoscaling(project) } },
        spec: {
          containers: [container],
          ...(concurrency !== undefined ? { containerConcurrency: concurrency } : {}),
          ...(project.doc.deploy?.serviceAccountName ? { serviceAccountName: project.doc.deploy.serviceAccountName } : {}),
          ...(volumes.length ? { volumes } : {}),
        },
      },
      // A deploy sends every request to the revision it made, also after a rollback pinned another.
      traffic: [{ latestRevision: true, percent: 100 }],
    },
  };
  return { service, references };
}
