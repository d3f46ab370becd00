/**
 * The NodeRestriction admission plugin (kubernetes plugin/pkg/admission/noderestriction), as `admit`
 * hooks on Node, Lease and Pod: what a node (`system:node:<name>` in `system:nodes`) may write beyond
 * what the Node authorizer decides from the request alone. Anyone else passes untouched.
 *
 * - Node: a node creates only its own, without `spec.configSource` and without labels kubelets may not
 *   set (node-labels.ts); an update (of the object or its status) may not change configSource to a new
 *   value, nor change taints, ownerReferences (CVE-2025-5187) or those labels.
 * - Lease: a node creates only its own.
 * - Pod: a node creates only mirror pods (`kubernetes.io/config.mirror`) bound to itself, owned by its
 *   Node alone (as controller, without blockOwnerDeletion, with its uid), and naming no ServiceAccount,
 *   Secret, ConfigMap, ClusterTrustBundle or PersistentVolumeClaim; it writes the status of, deletes
 *   and evicts only the pods bound to it, as stored (a pod that is gone: the store's 404, as a kubelet
 *   gets from kube-apiserver).
 *
 * - TokenRequest: a node's is bound to a pod (by uid) that runs on it (nodeTokenRequest, called by
 *   subresources/token.ts, as a subresource create runs no kind's hook).
 *
 * The authorizer (auth/node-authorizer.ts) holds the rest, as the request names the object: writes to
 * another node's Node or Lease, and the pod writes its graph already knows to be about another node's pod.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { forbidden } from '../../api/errors.js';
import type { Hooks, Services } from '../definition.js';
import type { RequestContext } from '../rest.js';
import { arr, obj, spec, str } from './common.js';
import { forbiddenNodeLabels } from './node-labels.js';
import { refersTo, specReferences, type Referenced } from './pod-references.js';

const NodePrefix = 'system:node:';
const MirrorAnnotation = 'kubernetes.io/config.mirror';
const q = JSON.stringify;

/** The node a request comes from, or undefined for every other user. */
const nodeOf = (ctx: RequestContext): string | undefined => {
  const user = ctx.user;
  return user && user.groups.includes('system:nodes') && user.name.startsWith(NodePrefix) ? user.name.slice(NodePrefix.length) : undefined;
};

/** One check: why a node may not write this object (`old`: what it replaces, empty on a create), or nothing. */
type Rule = (obj: KubeObject, old: KubeObject, node: string, services: Services) => string | undefined | Promise<string | undefined>;

const Nothing: KubeObject = { apiVersion: '', kind: '', metadata: {} };

/** A kind's admit hook: its rules for a node's creates and updates, in order; the first refusal is the 403. */
const restrict = (group: string, resource: string, create: readonly Rule[], update: readonly Rule[] = []): NonNullable<Hooks['admit']> =>
  async (o, old, ctx, services) => {
    const node = nodeOf(ctx);
    if (node === undefined) return;
    for (const rule of old ? update : create) {
      const why = await rule(o, old ?? Nothing, node, services);
      if (why) throw forbidden({ group, resource }, o.metadata?.name ?? '', why);
    }
  };

/** Absent, null and empty are the same value (apiequality.Semantic). */
const same = (a: unknown, b: unknown): boolean => isDeepStrictEqual(arr(a), arr(b));

const changedLabels = (o: KubeObject, old: KubeObject): string[] => {
  const [now, was] = [o.metadata.labels ?? {}, old.metadata.labels ?? {}];
  return [...new Set([...Object.keys(now), ...Object.keys(was)])].filter((k) => now[k] !== was[k]);
};

const nodeCreate: readonly Rule[] = [
  (o, _, node) => (o.metadata.name === node ? undefined : `node ${q(node)} is not allowed to modify node ${q(o.metadata.name ?? '')}`),
  // Kubernetes' wording, "pods" included.
  (o, _, node) => (spec(o).configSource != null ? `node ${q(node)} is not allowed to create pods with a non-nil configSource` : undefined),
  (o, old, node) => {
    const bad = forbiddenNodeLabels(changedLabels(o, old));
    return bad.length ? `node ${q(node)} is not allowed to set the following labels: ${bad.join(', ')}` : undefined;
  },
];

const nodeUpdate: readonly Rule[] = [
  (o, old, node) => {
    const source = spec(o).configSource;
    return source != null && !isDeepStrictEqual(source, spec(old).configSource) ? `node ${q(node)} is not allowed to update configSource to a new non-nil configSource` : undefined;
  },
  (o, old, node) => (same(spec(o).taints, spec(old).taints) ? undefined : `node ${q(node)} is not allowed to modify taints`),
  (o, old, node) => (same(o.metadata.ownerReferences, old.metadata.ownerReferences) ? undefined : `node ${q(node)} is not allowed to modify ownerReferences`),
  (o, old) => {
    const bad = forbiddenNodeLabels(changedLabels(o, old));
    return bad.length ? `is not allowed to modify labels: ${bad.join(', ')}` : undefined;
  },
];

/** A mirror pod's one owner: its node, as controller, not blocking deletion, with the node's uid. */
const ownedByNode: Rule = async (o, _, node, services) => {
  const owners = arr(o.metadata.ownerReferences).map(obj);
  if (owners.length > 1) return `node ${q(node)} can only create pods with a single owner reference set to itself`;
  const [owner] = owners;
  if (!owner || owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) return `node ${q(node)} can only create pods with an owner reference set to itself`;
  if (owner.controller !== true) return `node ${q(node)} can only create pods with a controller owner reference set to itself`;
  if (owner.blockOwnerDeletion === true) return `node ${q(node)} must not set blockOwnerDeletion on an owner reference`;
  // A node that does not exist: its 404, as Kubernetes answers.
  const uid = (await services.find('', 'v1', 'nodes')!.get({}, node)).metadata.uid ?? '';
  return owner.uid === uid ? undefined : `node ${node} UID mismatch: expected ${str(owner.uid)} got ${uid}`;
};

/** What a mirror pod may not name, in the order Kubernetes checks, with the noun its message uses. */
const Unreferenced: readonly (readonly [Referenced, string])[] = [
  ['serviceaccount', 'a service account'],
  ['secret', 'secrets'],
  ['configmap', 'configmaps'],
  ['clustertrustbundle', 'clustertrustbundles'],
  ['pvc', 'persistentvolumeclaims'],
];

const podCreate: readonly Rule[] = [
  (o, _, node) => (MirrorAnnotation in (o.metadata.annotations ?? {}) ? undefined : `pod does not have ${q(MirrorAnnotation)} annotation, node ${q(node)} can only create mirror pods`),
  (o, _, node) => (str(spec(o).nodeName) === node ? undefined : `node ${q(node)} can only create pods with spec.nodeName set to itself`),
  ownedByNode,
  (o, _, node) => {
    const refs = specReferences(spec(o));
    const found = Unreferenced.find(([kind]) => refersTo(refs, kind));
    return found && `node ${q(node)} can not create pods that reference ${found[1]}`;
  },
];

export const nodeRestriction = restrict('', 'nodes', nodeCreate, nodeUpdate);
/** admitPodStatus: the stored pod (a missing one is the store's 404 before this) is bound to the node. */
const podUpdate: readonly Rule[] = [
  (_, old, node) => (str(spec(old).nodeName) === node ? undefined : `node ${q(node)} can only update pod status for pods with spec.nodeName set to itself`),
];

export const podRestriction = restrict('', 'pods', podCreate, podUpdate);

/** admitPod's delete (an eviction deletes through it too): a node deletes only a stored pod bound to it. */
export const ownPodsOnly = (pod: KubeObject, ctx: RequestContext): string | undefined => {
  const node = nodeOf(ctx);
  return node === undefined || str(spec(pod).nodeName) === node ? undefined : `node ${q(node)} can only delete pods with spec.nodeName set to itself`;
};
export const ownLeaseOnly = restrict('coordination.k8s.io', 'leases', [
  (o, _, node) => (o.metadata.name === node ? undefined : 'can only access node lease with the same name as the requesting node'),
]);

/** admitServiceAccount: a node asks for tokens only for pods bound to it, named with their uid. */
export async function nodeTokenRequest(bound: { kind: string; name: string; uid?: string } | undefined, account: string, ctx: RequestContext, services: Services): Promise<void> {
  const node = nodeOf(ctx);
  if (node === undefined) return;
  const refuse = (why: string) => forbidden({ group: '', resource: 'serviceaccounts' }, account, why);
  if (bound?.kind !== 'Pod') throw refuse('node requested token not bound to a pod');
  if (!bound.uid) throw refuse('node requested token with a pod binding without a uid');
  const pod = await services.find('', 'v1', 'pods')!.get(ctx, bound.name);
  if (pod.metadata.uid !== bound.uid) {
    throw refuse(`the UID in the bound object reference (${bound.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
  }
  if (str(spec(pod).nodeName) !== node) throw refuse('node requested token bound to a pod scheduled on a different node');
}
