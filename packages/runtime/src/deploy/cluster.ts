/**
 * The cluster as the deploy commands reach it: the kubeconfig as kubectl reads it (`--kubeconfig`,
 * else `KUBECONFIG`, else ~/.kube/config), the namespace (`--namespace`, else func.yaml
 * `namespace` / `deploy.namespace`, else the context's), and what it serves. Failures become one
 * message that says what to do, with the local cluster as the usual answer.
 */
import type { KubeClient } from '@func/kube-client';
import { CommandError } from '../command-error.js';
import type { FunctionProject } from '../project.js';

export interface ClusterOptions {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export interface Cluster {
  kube: KubeClient;
  namespace: string;
  /** The kubeconfig files in use. */
  files: string[];
  server: string;
}

const START_LOCAL = 'To deploy to the local cluster, start it (`npx cluster-api serve`) and point KUBECONFIG at the kubeconfig.yaml it writes in its data directory (`export KUBECONFIG=$PWD/data/kubeconfig.yaml`).';

/** A cluster failure as one message (and the input errors of this module passed through). */
export function clusterFailure(err: unknown): Error {
  const e = err as Error & { kind?: string; code?: number };
  switch (e?.name) {
    case 'KubeconfigError':
      return new CommandError(`${e.message}. ${START_LOCAL}`);
    case 'KubeConnectionError':
      return new CommandError(e.kind === 'unreachable' ? `${e.message} ${START_LOCAL}` : e.message);
    case 'KubeApiError':
      if (e.code === 401) return new CommandError(`The cluster refused the kubeconfig's credentials: ${e.message}. Check the user in your kubeconfig (a token may have expired).`);
      return new CommandError(`The cluster refused a request: ${e.message}`);
    default:
      return err as Error;
  }
}

export function namespaceFor(project: FunctionProject | undefined, flag: string | undefined, contextNamespace: string): string {
  return flag || project?.doc.namespace || project?.doc.deploy?.namespace || contextNamespace || 'default';
}

export async function connect(options: ClusterOptions, project?: FunctionProject): Promise<Cluster> {
  const { KubeClient } = await import('@func/kube-client');
  try {
    const kube = KubeClient.fromKubeconfig({ kubeconfig: options.kubeconfig, context: options.context });
    return { kube, namespace: namespaceFor(project, options.namespace, kube.namespace), files: kube.connection.files, server: kube.connection.server };
  } catch (err) {
    throw clusterFailure(err);
  }
}

/** Whether the cluster serves `group/version` resources named `plural` (discovery, as kubectl asks). */
export async function serves(kube: KubeClient, groupVersion: string, plural: string): Promise<boolean> {
  try {
    const res = await kube.raw({ method: 'GET', path: `/apis/${groupVersion}`, what: `discover ${groupVersion}` });
    return ((JSON.parse(res.body) as { resources?: { name: string }[] }).resources ?? []).some((r) => r.name === plural);
  } catch (err) {
    if ((err as { code?: number }).code === 404) return false;
    throw clusterFailure(err);
  }
}
