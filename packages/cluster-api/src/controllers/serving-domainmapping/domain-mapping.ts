/**
 * Knative's DomainMapping reconciler: a DomainMapping named for a domain (`hello.example.com`) in a
 * namespace maps that host to what `spec.ref` names there — a Knative Service or Route — which the
 * gateway then serves on it as on the Route's own URL. Status as Knative's: `url` and
 * `address.url` `http://<domain>`; DomainClaimed (False, DomainAlreadyClaimed, when a mapping of the
 * same domain in another namespace was there first: a domain belongs to one namespace, as
 * Knative's ClusterDomainClaims keep it), ReferenceResolved (the ref is a Service or Route of the
 * namespace with an address), IngressReady once both hold, CertificateProvisioned (no TLS), Ready.
 */
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';
import { conditionSet, type Marked } from '../../serving/conditions.js';
import { referencedRoute } from '../../serving/domain.js';
import type { Obj, ServingEnv } from '../../serving/kinds.js';

const older = (a: Obj, b: Obj): boolean =>
  (a.metadata.creationTimestamp ?? '') < (b.metadata.creationTimestamp ?? '') || (a.metadata.creationTimestamp === b.metadata.creationTimestamp && (a.metadata.namespace ?? '') < (b.metadata.namespace ?? ''));

export function startDomainMappingController(env: ServingEnv): Controller {
  const mappings = env.cache('domainMappings');
  const routes = env.cache('routes');

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const dm = mappings.get(namespace, name) as Obj | undefined;
    if (!dm || dm.metadata.deletionTimestamp) return;
    const first = mappings.list().filter((o) => o.metadata.name === name && o.metadata.namespace !== namespace && older(o as Obj, dm));
    const claimed: Marked = first.length === 0 ? { type: 'DomainClaimed', status: 'True' }
      : { type: 'DomainClaimed', status: 'False', reason: 'DomainAlreadyClaimed', message: `The domain name is already in use by another DomainMapping in namespace ${JSON.stringify(first[0]!.metadata.namespace)}` };
    const target = referencedRoute(dm);
    const route = 'route' in target ? (routes.get(namespace, target.route) as Obj | undefined) : undefined;
    const resolved: Marked = 'message' in target ? { type: 'ReferenceResolved', status: 'False', reason: 'ResolveFailed', message: target.message }
      : !route ? { type: 'ReferenceResolved', status: 'False', reason: 'ResolveFailed', message: `${dm.spec.ref.kind} ${JSON.stringify(target.route)} not found` }
        : !route.status?.address?.url ? { type: 'ReferenceResolved', status: 'Unknown', reason: 'ResolveFailed', message: `Route ${JSON.stringify(target.route)} has no address yet` }
          : { type: 'ReferenceResolved', status: 'True' };
    const ingress: Marked = claimed.status === 'True' && resolved.status === 'True' ? { type: 'IngressReady', status: 'True' } : { type: 'IngressReady', status: 'Unknown', reason: 'IngressNotConfigured', message: 'Ingress has not yet been reconciled.' };
    const url = `http://${name}`;
    await writeStatus({ store: env.store('domainMappings'), cache: mappings }, dm, {
      observedGeneration: dm.metadata.generation,
      conditions: conditionSet(dm.status?.conditions, [claimed, resolved, ingress, { type: 'CertificateProvisioned', status: 'True', reason: 'TLSNotEnabled', message: 'autoTLS is not enabled' }]),
      url,
      address: { url },
    });
  };

  // A Route wakes the mappings of its namespace that name it (or its Service); one mapping its domain's others.
  const byRoute = (r: Obj) => mappings.list(r.metadata.namespace).filter((dm) => {
    const t = referencedRoute(dm as Obj);
    return 'route' in t && t.route === r.metadata.name;
  }).map(objectKey);
  return startReconciler('serving-domainmapping-controller', reconcile, [
    { cache: mappings, keys: (o) => mappings.list().filter((m) => m.metadata.name === o.metadata.name).map(objectKey).concat(objectKey(o)) },
    { cache: routes, keys: byRoute },
  ], { log: env.ctx.log });
}
