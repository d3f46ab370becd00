/**
 * The Node authorizer (kube-apiserver's `--authorization-mode Node`), with the checks of the
 * NodeRestriction admission plugin that the node graph can decide: a user `system:node:<name>` in
 * `system:nodes` may
 *
 * - read the Secrets, ConfigMaps and PersistentVolumeClaims its pods reference, and request tokens
 *   for their ServiceAccounts (by name: a list or watch must name the object);
 * - read pods; update and patch the status of, evict and delete pods (kube's NodeRules), refused here
 *   when the graph knows the pod to be bound to another node; NodeRestriction (registry/kinds/
 *   node-restriction.ts) checks the stored pod, so a pod the graph does not know (gone, as after a
 *   forced or foreground delete, or not seen yet) gets the store's 404 or NodeRestriction's 403, as
 *   from kube-apiserver; create pods (NodeRestriction lets only mirror pods through);
 * - create, read and watch Nodes, but update and patch only its own, and delete none (kube's bootstrap
 *   NodeRules); get, create, update, patch and delete only its own Lease in kube-node-lease;
 * - write Events, create TokenReviews and SubjectAccessReviews (its kubelet server's webhook checks),
 *   read Services and Endpoints.
 *
 * Anything else gets no opinion (RBAC decides, and binds nothing to nodes), with the reason kube's
 * authorizer gives. Other users get no opinion at all.
 */
import type { NodeGraph, Related } from './node-graph.js';

/** The request as authorizers see it (k8s.io/apiserver authorizer.Attributes). */
export interface NodeRequest {
  user: { name: string; groups: readonly string[] };
  verb: string;
  resourceRequest: boolean;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
}

export interface NodeDecision {
  decision: 'Allow' | 'NoOpinion';
  reason: string;
}

export const NodesGroup = 'system:nodes';
const NodePrefix = 'system:node:';
const LeaseNamespace = 'kube-node-lease';
const Read = ['get', 'list', 'watch'];

/** The node a user is, or undefined when the user is not a node. */
export function nodeOf(user: NodeRequest['user']): string | undefined {
  return user.groups.includes(NodesGroup) && user.name.startsWith(NodePrefix) && user.name.length > NodePrefix.length ? user.name.slice(NodePrefix.length) : undefined;
}

const allow: NodeDecision = { decision: 'Allow', reason: '' };
const none = (reason = ''): NodeDecision => ({ decision: 'NoOpinion', reason });

/** Resources decided from the graph: a node reads them only when one of its pods references them. */
const Graphed: Record<string, Related> = { secrets: 'secret', configmaps: 'configmap', persistentvolumeclaims: 'pvc' };

const q = JSON.stringify;

/** The pod writes a node may make to the pods bound to it, with NodeRestriction's refusal for any other pod. */
const PodWrites: readonly { subresource: string; verbs: readonly string[]; refusal(node: string): string }[] = [
  { subresource: '', verbs: ['delete'], refusal: (node) => `node ${q(node)} can only delete pods with spec.nodeName set to itself` },
  { subresource: 'eviction', verbs: ['create'], refusal: (node) => `node ${node} can only evict pods with spec.nodeName set to itself` },
  { subresource: 'status', verbs: ['update', 'patch'], refusal: (node) => `node ${q(node)} can only update pod status for pods with spec.nodeName set to itself` },
];

/** What every node may do whatever its pods (bootstrap policy's NodeRules, the parts that apply here). */
function nodeRules(r: NodeRequest): boolean {
  const g = r.apiGroup;
  const res = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  if (g === '' && (res === 'events') && ['create', 'update', 'patch'].includes(r.verb)) return true;
  if (g === 'events.k8s.io' && res === 'events' && ['create', 'update', 'patch'].includes(r.verb)) return true;
  if (g === 'authentication.k8s.io' && res === 'tokenreviews' && r.verb === 'create') return true;
  if (g === 'authorization.k8s.io' && res === 'subjectaccessreviews' && r.verb === 'create') return true;
  if (g === '' && ['services', 'endpoints', 'pods'].includes(res) && Read.includes(r.verb)) return true;
  if (g === 'discovery.k8s.io' && res === 'endpointslices' && Read.includes(r.verb)) return true;
  // Client certificate rotation: a node posts and follows its own CSRs.
  if (g === 'certificates.k8s.io' && res === 'certificatesigningrequests' && ['create', ...Read].includes(r.verb)) return true;
  return g === '' && res === 'nodes' && ['create', ...Read].includes(r.verb);
}

export class NodeAuthorizer {
  constructor(private readonly graph: NodeGraph) {}

  authorize(r: NodeRequest): NodeDecision {
    const node = nodeOf(r.user);
    if (!node || !r.resourceRequest) return none();
    if (nodeRules(r)) return allow;
    const graphed = r.apiGroup === '' && !r.subresource ? Graphed[r.resource] : undefined;
    if (graphed) return this.graphRead(node, graphed, r);
    if (r.apiGroup === '' && r.resource === 'serviceaccounts' && r.subresource === 'token') {
      if (r.verb !== 'create') return none(`can only create tokens for individual service accounts`);
      return this.graph.relates(node, 'serviceaccount', r.namespace, r.name) ? allow : none(`no relationship found between node '${node}' and this object`);
    }
    if (r.apiGroup === '' && r.resource === 'pods') return this.pods(node, r);
    if (r.apiGroup === '' && r.resource === 'nodes') return r.name === node && ['update', 'patch', 'get'].includes(r.verb) ? allow : none(`node '${node}' cannot modify node '${r.name}'`);
    if (r.apiGroup === 'coordination.k8s.io' && r.resource === 'leases') return this.lease(node, r);
    return none();
  }

  private graphRead(node: string, kind: Related, r: NodeRequest): NodeDecision {
    if (!Read.includes(r.verb)) return none(`can only read resources of this type`);
    if (!r.name) return none(`No Object name found, key not found`);
    return this.graph.relates(node, kind, r.namespace, r.name) ? allow : none(`no relationship found between node '${node}' and this object`);
  }

  /** authorizeLease: a create is not named in the request (its name is in the body), so only the namespace is checked. */
  private lease(node: string, r: NodeRequest): NodeDecision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(r.verb)) return none(`can only get, create, update, patch, or delete a node lease`);
    if (r.namespace !== LeaseNamespace) return none(`can only access leases in the "${LeaseNamespace}" system namespace`);
    if (r.verb !== 'create' && r.name !== node) return none(`can only access node lease with the same name as the requesting node`);
    return allow;
  }

  /**
   * A pod write: refused in NodeRestriction's words when the graph knows the pod to be another node's;
   * otherwise allowed, and NodeRestriction decides from the stored pod (the graph follows a watch, so
   * it may not know a pod yet, or any more).
   */
  private pods(node: string, r: NodeRequest): NodeDecision {
    if (r.verb === 'create' && !r.subresource) return allow;
    const write = PodWrites.find((w) => w.subresource === r.subresource && w.verbs.includes(r.verb));
    if (!write) return none();
    const bound = this.graph.podNode(r.namespace, r.name);
    return bound === undefined || bound === node ? allow : none(write.refusal(node));
  }
}
