/**
 * Knative's ContainerSource reconciler: a ContainerSource is a Deployment `<name>-deployment` that
 * runs its `template` (one replica, labelled and selected by the source's labels) and a SinkBinding
 * `<name>-sinkbinding` whose subject is that Deployment, with the source's sink and ceOverrides —
 * both controlled by it. Its status is theirs: `SinkBindingReady` and `sinkUri` from the
 * SinkBinding, `ReceiveAdapterReady` from the Deployment's Available condition. The Deployment's
 * template is compared as Knative does (DeepDerivative: what the server defaulted and the binding
 * appended are not differences), so the binding and this controller never undo each other.
 */
import { isApiError } from '../../api/errors.js';
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import { inNamespace, type Controller } from '../shared.js';
import { ensureChild } from '../../serving/children.js';
import { conditionOf, type Marked } from '../../serving/conditions.js';
import { controlledBy, controllerKey, isControlledBy, Kinds, type Obj, type ServingEnv } from '../../serving/kinds.js';
import { derivative } from '../../sources/derivative.js';
import { sourceStatus } from '../../sources/status.js';

const SourceLabels = (name: string) => ({ 'sources.knative.dev/source': 'container-source-controller', 'sources.knative.dev/name': name });

const propagated = (type: string, what: string, c: { status: string; reason?: string; message?: string } | undefined): Marked =>
  !c ? { type, status: 'Unknown', reason: `${what}Unavailable`, message: `The ${what} is not ready yet.` }
    : { type, status: c.status as Marked['status'], ...(c.reason && { reason: c.reason }), ...(c.message && { message: c.message }) };

export function startContainerSourceController(env: ServingEnv): Controller {
  const sources = env.cache('containerSources');
  const deployments = env.cache('deployments');
  const bindings = env.cache('sinkBindings');

  /** The Deployment, created or brought in line with the template; a message when one of that name is not ours. */
  const ensureDeployment = async (cs: Obj): Promise<Obj | string> => {
    const name = `${cs.metadata.name}-deployment`;
    const namespace = cs.metadata.namespace!;
    const template = structuredClone(cs.spec?.template ?? {});
    const labels = SourceLabels(cs.metadata.name!);
    template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...labels } };
    const desired: Obj = {
      apiVersion: 'apps/v1', kind: 'Deployment',
      metadata: { name, namespace, labels, ownerReferences: [controlledBy(cs, Kinds.containerSources)] },
      spec: { replicas: 1, selector: { matchLabels: labels }, template },
    };
    const current = deployments.get(namespace, name) as Obj | undefined;
    if (!current) {
      const created = await env.store('deployments').create(inNamespace(namespace), desired).catch((err: unknown) => {
        if (isApiError(err) && err.code === 409) return undefined;
        throw err;
      });
      if (created) deployments.observe(created.object);
      return (created?.object as Obj | undefined) ?? 'Deployment being created';
    }
    if (!isControlledBy(current, cs)) return `There is an existing Deployment "${name}" that we do not own.`;
    if (derivative(desired.spec.template, current.spec?.template)) return current;
    const updated = await env.store('deployments').update(inNamespace(namespace), name, { ...current, spec: { ...current.spec, template } });
    deployments.observe(updated.object);
    return updated.object as Obj;
  };

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const cs = sources.get(namespace, name) as Obj | undefined;
    if (!cs || cs.metadata.deletionTimestamp) return;
    const binding = await ensureChild(env, 'sinkBindings', cs, {
      apiVersion: 'sources.knative.dev/v1', kind: 'SinkBinding',
      metadata: { name: `${name}-sinkbinding`, namespace, labels: SourceLabels(name), ownerReferences: [controlledBy(cs, Kinds.containerSources)] },
      spec: { subject: { apiVersion: 'apps/v1', kind: 'Deployment', name: `${name}-deployment` }, ...(cs.spec?.sink && { sink: cs.spec.sink }), ...(cs.spec?.ceOverrides && { ceOverrides: cs.spec.ceOverrides }) },
    }, ['spec']);
    const deployment = await ensureDeployment(cs);
    const sb = binding.ok ? binding.object : undefined;
    const marked: Marked[] = [
      binding.ok ? propagated('SinkBindingReady', 'SinkBinding', sb && conditionOf(sb, 'Ready')) : { type: 'SinkBindingReady', status: 'False', reason: 'NotOwned', message: binding.message },
      typeof deployment === 'string'
        ? { type: 'ReceiveAdapterReady', status: deployment.startsWith('There is') ? 'False' : 'Unknown', reason: deployment.startsWith('There is') ? 'NotOwned' : 'DeploymentUnavailable', message: deployment }
        : propagated('ReceiveAdapterReady', 'Deployment', (deployment.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Available')),
    ];
    const sinkUri = sb?.status?.sinkUri;
    await writeStatus({ store: env.store('containerSources'), cache: sources }, cs, sourceStatus(cs, marked, sinkUri ? { uri: sinkUri } : undefined));
  };

  const owner = controllerKey(Kinds.containerSources);
  return startReconciler('source-container-controller', reconcile, [
    { cache: sources, keys: (o) => [objectKey(o)] },
    { cache: deployments, keys: owner },
    { cache: bindings, keys: owner },
  ], { log: env.ctx.log });
}
