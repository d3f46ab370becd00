/**
 * `func-runtime invoke --name <function>`: the URL of a deployed function that answers from this
 * machine, as `deploy` printed it (deploy/where.ts): a Knative Service's URL through the local
 * gateway (`http://hello.default.localhost:8092/`), a raw Deployment's Service when its ClusterIP
 * answers here. A path given as the URL (`/orders?id=7`) goes on that URL.
 */
import type { ClusterOptions } from '../deploy/cluster.js';
import { parseTarget } from './invoke-request.js';

export async function deployedTarget(opts: ClusterOptions & { name: string; path?: string }): Promise<{ url: string } | { message: string; exit: 'errorStatus' | 'unreachable' }> {
  const [{ connect }, { findDeployed }, { whereItAnswers }] = await Promise.all([import('../deploy/cluster.js'), import('../deploy/target.js'), import('../deploy/where.js')]);
  let cluster;
  try {
    cluster = await connect(opts);
  } catch (err) {
    return { message: (err as Error).message, exit: 'unreachable' };
  }
  const { kube, namespace } = cluster;
  try {
    const found = await findDeployed(kube, opts.name, namespace);
    if (!found.knative && !found.deployment) return { message: `No function ${opts.name} is deployed in namespace ${namespace} (no Knative Service or Deployment of that name).`, exit: 'errorStatus' };
    const where = await whereItAnswers(kube, { kind: found.knative ? 'KnativeService' : 'Deployment', name: opts.name, namespace, readinessPath: '/health/readiness' });
    if (!where.url) return { message: `${opts.name} in namespace ${namespace} does not answer from this machine; it is reached so: ${where.lines.map(([label, value]) => `${label} ${value}`).join('; ') || 'nowhere yet'}.`, exit: 'unreachable' };
    return { url: opts.path?.startsWith('/') ? parseTarget(new URL(opts.path, where.url).href).href : where.url };
  } catch (err) {
    return { message: (err as Error).message, exit: 'unreachable' };
  } finally {
    kube.close();
  }
}
