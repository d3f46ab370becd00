/**
 * In-cluster configuration, as client-go's rest.InClusterConfig: the API server from
 * KUBERNETES_SERVICE_HOST/PORT, the pod's service account token, CA and namespace from files under
 * /var/run/secrets/kubernetes.io/serviceaccount — a root the node agent may point elsewhere, since
 * it writes those files per pod instead of mounting them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeconfigError } from './errors.js';
import type { Connection } from './kubeconfig.js';

export const SERVICE_ACCOUNT_ROOT = '/var/run/secrets/kubernetes.io/serviceaccount';

export function isInCluster(env: NodeJS.ProcessEnv = process.env): boolean {
  return !!env.KUBERNETES_SERVICE_HOST && !!env.KUBERNETES_SERVICE_PORT;
}

export interface InClusterOptions {
  env?: NodeJS.ProcessEnv;
  root?: string;
  namespace?: string;
}

export function inClusterConnection(options: InClusterOptions = {}): Connection {
  const env = options.env ?? process.env;
  const root = options.root ?? SERVICE_ACCOUNT_ROOT;
  if (!isInCluster(env)) throw new KubeconfigError('Not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  const read = (name: string, required: boolean): string | undefined => {
    try {
      return readFileSync(join(root, name), 'utf8');
    } catch (err) {
      if (!required) return undefined;
      throw new KubeconfigError(`In-cluster config: cannot read ${join(root, name)} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  read('token', true);
  const host = env.KUBERNETES_SERVICE_HOST!;
  const ca = read('ca.crt', false);
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${env.KUBERNETES_SERVICE_PORT}`,
    ca: ca ? Buffer.from(ca) : undefined,
    insecureSkipTlsVerify: false,
    credentials: { tokenFile: join(root, 'token') },
    namespace: options.namespace ?? read('namespace', false)?.trim() ?? 'default',
    context: 'in-cluster',
    files: [],
  };
}
