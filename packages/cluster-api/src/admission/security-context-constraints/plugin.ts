/**
 * OpenShift's `security.openshift.io/SecurityContextConstraint` admission (sccadmission): every SCC,
 * in priority-then-restrictiveness order (order.ts), is tried on a pod being created or changed; one
 * neither the requesting user nor the pod's ServiceAccount may `use` (listed in its users/groups, or
 * allowed verb `use` on `securitycontextconstraints.security.openshift.io/<name>` in the pod's
 * namespace by the authorizer) counts as `not usable by user or serviceaccount`; the first usable
 * one whose defaults make the pod valid admits it — its defaults applied (only on create; an update
 * must already be valid as it is) and its name recorded in the `openshift.io/scc` annotation.
 * Otherwise the pod is refused with every SCC's reason, as OpenShift words it. A workload's pods,
 * created by its controller, are judged for the controller's user and the pod's ServiceAccount.
 *
 * The same plugin gives each new namespace its uid, supplemental-group and MCS ranges
 * (namespace-ranges.ts), which the `MustRunAs*` strategies draw from.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { forbidden, isApiError } from '../../api/errors.js';
import { str } from '../../registry/kinds/common.js';
import type { UserInfo } from '../../registry/rest.js';
import type { AdmissionPlugin, AdmissionRequest } from '../plugin.js';
import { watchedList } from '../lookup.js';
import { annotateNew, McsAnnotation, namespaceWithRanges, SupplementalGroupsAnnotation, UidRangeAnnotation } from './namespace-ranges.js';
import { byPriority } from './order.js';
import { applyTo, providerFor, type Provider } from './provider.js';

export const SccAnnotation = 'openshift.io/scc';
const Pods = { group: '', resource: 'pods' };
const Group = 'security.openshift.io';

/** serviceaccount.UserInfo: the ServiceAccount's user as the check sees it. */
const serviceAccountUser = (namespace: string, name: string): UserInfo => ({
  name: `system:serviceaccount:${namespace}:${name}`, uid: '', groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
});

/** ConstraintAppliesTo: named in the SCC, or allowed `use` of it. */
const mayUse = (req: AdmissionRequest, scc: KubeObject, user: UserInfo): boolean => {
  if ((scc.users as unknown[] | undefined)?.includes(user.name)) return true;
  if (((scc.groups as unknown[] | undefined) ?? []).some((g) => user.groups.includes(str(g)))) return true;
  const authorizer = req.services.authorizer;
  if (!authorizer) return true;
  return authorizer.authorize({
    user, verb: 'use', resourceRequest: true, apiGroup: Group, apiVersion: '', resource: 'securitycontextconstraints', subresource: '',
    namespace: req.namespace ?? '', name: scc.metadata.name ?? '', path: '',
  }).decision === 'Allow';
};

interface Outcome {
  pod?: KubeObject;
  scc?: string;
  errors: string[];
}

/** Providers of an SCC list (the lister's, kept while no SCC changes) for a namespace's ranges, made once per pair. */
const providerCache = new WeakMap<readonly KubeObject[], Map<string, readonly Provider[]>>();
const providersFor = (sccs: readonly KubeObject[], ns: KubeObject): readonly Provider[] => {
  const a = ns.metadata.annotations ?? {};
  const key = JSON.stringify([a[UidRangeAnnotation], a[SupplementalGroupsAnnotation], a[McsAnnotation]]);
  let byRanges = providerCache.get(sccs);
  if (!byRanges) providerCache.set(sccs, (byRanges = new Map()));
  let providers = byRanges.get(key);
  if (!providers) {
    providers = sccs.map((scc) => providerFor(scc, ns));
    if (byRanges.size >= 1000) byRanges.clear();
    byRanges.set(key, providers);
  }
  return providers;
};

/** computeSecurityContext: the first SCC that admits the pod, or every reason none did. */
const compute = async (req: AdmissionRequest, pod: KubeObject, mutationAllowed: boolean, hint: string | undefined, fresh = false): Promise<Outcome> => {
  const store = req.services.find('', 'v1', 'securitycontextconstraints');
  // In priority order, kept between requests until an SCC changes (the plugin's lister); read from
  // the store itself when a refusal is decided again.
  const sccs = !store ? [] : fresh ? (await store.list({}, {})).items.sort(byPriority) : await watchedList(store, (items) => items.sort(byPriority)).get();
  if (sccs.length === 0) {
    // A request with no user is one nothing authorizes (a registry used on its own): it is not constrained either.
    return req.ctx.user ? { errors: ['no SecurityContextConstraints found in cluster'] } : { pod, errors: [] };
  }
  let ns: KubeObject;
  let providers: Provider[];
  try {
    ns = await namespaceWithRanges(req.namespace ?? '', req.services);
    providers = [...providersFor(sccs, ns)];
  } catch (err) {
    if (isApiError(err)) throw err;
    throw forbidden(Pods, req.name, (err as Error).message);
  }
  const user = req.ctx.user;
  const account = str((pod.spec as { serviceAccountName?: unknown } | undefined)?.serviceAccountName);
  const sa = account ? serviceAccountUser(req.namespace ?? '', account) : undefined;
  // The SCC that admitted the pod before is tried first; the others keep their order.
  if (hint) providers.sort((a, b) => Number(b.name === hint) - Number(a.name === hint));
  const errors: string[] = [];
  for (const p of providers) {
    const usable = !user || mayUse(req, p.scc, user) || (sa !== undefined && mayUse(req, p.scc, sa));
    if (!usable) {
      errors.push(`provider ${JSON.stringify(p.name)}: Forbidden: not usable by user or serviceaccount`);
      continue;
    }
    const applied = applyTo(p, pod);
    if (!applied.pod) {
      errors.push(...applied.errors);
      continue;
    }
    if (mutationAllowed || isDeepStrictEqual(applied.pod.spec, pod.spec)) return { pod: applied.pod, scc: p.name, errors };
  }
  return { errors };
};

/**
 * compute, never missing a committed grant or SCC: a refusal is decided again with the SCCs read from
 * the store, once the authorizer has caught up with it (its RBAC cache follows by watch, a moment
 * after a binding is written).
 */
const computeFresh = async (req: AdmissionRequest, pod: KubeObject, mutationAllowed: boolean, hint: string | undefined): Promise<Outcome> => {
  const found = await compute(req, pod, mutationAllowed, hint);
  if (found.pod) return found;
  const refresh = req.services.authorizer?.refresh?.bind(req.services.authorizer);
  if (refresh && found.errors.some((e) => e.endsWith('not usable by user or serviceaccount'))) await refresh();
  return compute(req, pod, mutationAllowed, hint, true);
};

const refusal = (req: AdmissionRequest, errors: string[]): Error =>
  forbidden(Pods, req.name, `unable to validate against any security context constraint: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`);

/** Updates that leave the spec as it was (labels, annotations, finalizers, owners) are not judged again. */
const specUnchanged = (req: AdmissionRequest): boolean => req.operation === 'UPDATE' && isDeepStrictEqual(req.object.spec, req.oldObject?.spec);

/** The spec each request's mutating step admitted, as JSON. */
const admitted = new WeakMap<AdmissionRequest, string>();

const isPod = (req: AdmissionRequest): boolean => req.resource === 'pods' && req.group === '' && !req.subresource;

export const SecurityContextConstraint: AdmissionPlugin = {
  name: 'security.openshift.io/SecurityContextConstraint',
  handles: (req) => (isPod(req) && (req.operation === 'CREATE' || req.operation === 'UPDATE'))
    || (req.resource === 'namespaces' && req.group === '' && !req.subresource && req.operation === 'CREATE'),
  async mutate(req) {
    if (req.resource === 'namespaces') return annotateNew(req.object, req.services);
    if (specUnchanged(req)) return false;
    const pod = req.object;
    const found = await computeFresh(req, pod, req.operation === 'CREATE', pod.metadata.annotations?.[SccAnnotation]);
    if (!found.pod) throw refusal(req, found.errors);
    if (!found.scc) return false;
    const changed = !isDeepStrictEqual(found.pod.spec, pod.spec) || pod.metadata.annotations?.[SccAnnotation] !== found.scc;
    pod.spec = found.pod.spec;
    pod.metadata.annotations = { ...pod.metadata.annotations, [SccAnnotation]: found.scc };
    admitted.set(req, JSON.stringify(pod.spec));
    return changed;
  },
  async validate(req) {
    if (!isPod(req) || specUnchanged(req)) return;
    // Unchanged since this plugin's own mutating step admitted it: nothing new to judge.
    if (admitted.get(req) === JSON.stringify(req.object.spec)) return;
    // What later mutating steps did must still pass, as it is.
    const found = await computeFresh(req, req.object, false, req.object.metadata.annotations?.[SccAnnotation]);
    if (!found.pod) throw refusal(req, found.errors);
  },
};
