/**
 * Which deployed function `undeploy`, `describe` and `logs` act on: `--name`, else the name in the
 * project's func.yaml; the namespace as deploy chose it (`--namespace`, func.yaml, the context).
 * And what the cluster holds of it: a Deployment (the raw deployer's) or a Knative Service.
 */
import type { KubeClient } from '@func/kube-client';
import { CommandError } from '../command-error.js';
import { loadProject, type FunctionProject } from '../project.js';
import { clusterFailure, connect, serves, type Cluster, type ClusterOptions } from './cluster.js';
import type { Deployment, Service } from './kube-types.js';

export interface TargetOptions extends ClusterOptions {
  path: string;
  name?: string;
}

export interface Target {
  name: string;
  namespace: string;
  cluster: Cluster;
  project?: FunctionProject;
}

export async function resolveTarget(opts: TargetOptions): Promise<Target> {
  const project = opts.name ? undefined : await loadProject(opts.path);
  const cluster = await connect(opts, project);
  return { name: opts.name ?? project!.name, namespace: cluster.namespace, cluster, project };
}

export interface Deployed {
  deployment?: Deployment;
  knative?: Service;
}

const orUndefined = <T>(p: Promise<T>): Promise<T | undefined> => p.catch((err: { code?: number }) => (err.code === 404 ? undefined : Promise.reject(clusterFailure(err))));

export async function findDeployed(kube: KubeClient, name: string, namespace: string): Promise<Deployed> {
  const { Resources } = await import('@func/kube-client');
  const [deployment, knative] = await Promise.all([
    orUndefined(kube.get<Deployment>(Resources.deployments, name, { namespace })),
    serves(kube, 'serving.knative.dev/v1', 'services').then((yes) => (yes ? orUndefined(kube.get<Service>(Resources.knativeServices, name, { namespace })) : undefined)),
  ]);
  return { deployment, knative };
}

export function notDeployed(t: Target): CommandError {
  return new CommandError(`No function ${t.name} is deployed in namespace ${t.namespace} (no Deployment or Knative Service of that name). Deploy it with \`func-runtime deploy\`, or name another with --name / --namespace.`);
}
