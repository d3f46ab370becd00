/**
 * Knative's ApiServerSource reconciler, its adapter run here (sources/apiserver/adapter.ts) instead
 * of in a Deployment: the sink is resolved (SinkProvided, `status.sinkUri`); the ServiceAccount
 * the source names (`serviceAccountName`, default `default`) is checked with SubjectAccessReviews
 * for get, list and watch on each resource in the source's namespace, and SufficientPermissions is
 * False, with Knative's message (`User <sa> cannot <verbs> resource "<r>" in API group "<g>" in
 * Namespace "<ns>"`) and the last review's reason, when any is denied; with both, the adapter runs
 * as that ServiceAccount (Deployed). A change to any Role, ClusterRole or binding checks every
 * source again, so granting or revoking access starts or stops its adapter.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import { inNamespace, type Controller } from '../shared.js';
import type { Obj, ServingEnv } from '../../serving/kinds.js';
import type { Marked } from '../../serving/conditions.js';
import { ApiServerAdapter, type AdapterSpec, type ResourceSpec } from '../../sources/apiserver/adapter.js';
import { findResource, splitApiVersion } from '../../sources/resources.js';
import { EventTypes, type Mode } from '../../sources/apiserver/event.js';
import { SinkResolver } from '../../sources/sink.js';
import { OidcDisabled, sinkProvided, sourceStatus } from '../../sources/status.js';
import { gatewayRouter } from '../../broker/dispatch/cluster-hosts.js';

const Verbs = ['get', 'list', 'watch'] as const;

export function startApiServerSourceController(env: ServingEnv): Controller {
  const ctx = env.ctx;
  const sources = env.cache('apiServerSources');
  const adapters = new Map<string, ApiServerAdapter>();
  const sinks = new SinkResolver(ctx, (key) => reconciler.enqueue(key));
  const reviews = ctx.client.find('authorization.k8s.io', 'v1', 'subjectaccessreviews');
  const source = ctx.apiServerUrl ?? 'https://kubernetes.default.svc';

  const stopAdapter = (key: string) => {
    adapters.get(key)?.stop();
    adapters.delete(key);
  };

  /** Knative's checkResourcesStatus: the verbs denied per resource, and the last review's reason. */
  const permissions = async (namespace: string, user: string, resources: ResourceSpec[]): Promise<Marked> => {
    let missing = '';
    let lastReason = '';
    for (const r of resources) {
      const plural = findResource(ctx.client, r.apiVersion, r.kind)?.definition.plural ?? `${(r.kind ?? '').toLowerCase()}s`;
      const { group } = splitApiVersion(r.apiVersion ?? '');
      const denied: string[] = [];
      for (const verb of Verbs) {
        const review = await reviews!.create(inNamespace(namespace), {
          apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {},
          spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'], resourceAttributes: { namespace, verb, group, resource: plural } },
        } as KubeObject);
        const st = (review.object as Obj).status ?? {};
        lastReason = st.reason ?? '';
        if (st.allowed !== true) denied.push(verb);
      }
      if (denied.length > 0) missing += `${missing ? ', ' : ''}${denied.join(', ')} resource "${plural}" in API group "${group}" in Namespace "${namespace}"`;
    }
    return missing
      ? { type: 'SufficientPermissions', status: 'False', ...(lastReason && { reason: lastReason }), message: `User ${user} cannot ${missing}` }
      : { type: 'SufficientPermissions', status: 'True' };
  };

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const src = sources.get(namespace, name) as Obj | undefined;
    if (!src || src.metadata.deletionTimestamp) {
      stopAdapter(key);
      sinks.untrack(key);
      return;
    }
    const spec = src.spec ?? {};
    const mode: Mode = spec.mode === 'Resource' ? 'Resource' : 'Reference';
    const serviceAccount: string = spec.serviceAccountName || 'default';
    const sink = await sinks.resolve(key, spec.sink, namespace);
    const allowed = reviews ? await permissions(namespace, `system:serviceaccount:${namespace}:${serviceAccount}`, spec.resources ?? []) : { type: 'SufficientPermissions', status: 'Unknown' as const, reason: 'NoReviews', message: 'SubjectAccessReviews are not served' };
    let deployed: Marked = { type: 'Deployed', status: 'True' };
    if ('uri' in sink && allowed.status === 'True' && ctx.clientAs) {
      const want: AdapterSpec = { namespace, name, mode, resources: spec.resources ?? [], owner: spec.owner, ceOverrides: spec.ceOverrides, sinkUri: sink.uri, source };
      if (!isDeepStrictEqual(adapters.get(key)?.spec, want)) {
        stopAdapter(key);
        adapters.set(key, new ApiServerAdapter(ctx.clientAs(namespace, serviceAccount), want, (e) => ctx.log?.(e), ctx.gatewayUrl && gatewayRouter(ctx.gatewayUrl)).start());
      }
    } else {
      stopAdapter(key);
      if (!ctx.clientAs) deployed = { type: 'Deployed', status: 'False', reason: 'NoAdapter', message: 'this controller manager cannot act as the ServiceAccount (it runs apart from the API server)' };
    }
    await writeStatus({ store: env.store('apiServerSources'), cache: sources }, src, sourceStatus(src, [deployed, OidcDisabled, sinkProvided(sink), allowed], sink, {
      ceAttributes: EventTypes(mode).map((type) => ({ type, source })),
    }));
  };

  // Any change to RBAC may grant or revoke a source's access: every source is checked again.
  const everySource = () => sources.list().map(objectKey);
  const rbac = ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']
    .map((plural) => ctx.client.find('rbac.authorization.k8s.io', 'v1', plural))
    .filter((s) => s !== undefined)
    .map((store) => ({ cache: ctx.caches.of(store), keys: everySource }));
  const reconciler = startReconciler('source-apiserver-controller', reconcile, [{ cache: sources, keys: (o) => [objectKey(o)] }, ...rbac], { log: ctx.log });
  return {
    stop: async () => {
      await reconciler.stop();
      for (const key of [...adapters.keys()]) stopAdapter(key);
    },
  };
}
