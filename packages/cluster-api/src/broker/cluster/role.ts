/**
 * What the broker may do in the cluster API, as RBAC data: one ClusterRole, bound to the identity a
 * broker process runs as. Every request the broker makes is covered (test/broker/cluster-role.test.ts
 * records them), and nothing more: it reads Brokers, Triggers, channels, Subscriptions and their
 * CRDs, writes only their status, reads Services and Endpoints to reach subscribers and the Addressables Knative's resolver
 * reads (its `addressable-resolver` role's kinds), may record Events, and asks the API who a
 * debugger client is and what it may do (TokenReviews, SubjectAccessReviews).
 */

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const read = ['get', 'list', 'watch'];

export const BROKER_CLUSTER_ROLE = 'cluster-api:broker';

export const brokerClusterRole = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: BROKER_CLUSTER_ROLE, labels: { 'app.kubernetes.io/component': 'broker' } },
  rules: [
    { apiGroups: ['eventing.knative.dev'], resources: ['brokers', 'triggers'], verbs: read },
    { apiGroups: ['eventing.knative.dev'], resources: ['brokers/status', 'triggers/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: ['apiextensions.k8s.io'], resources: ['customresourcedefinitions'], verbs: read },
    { apiGroups: [''], resources: ['services', 'endpoints'], verbs: read },
    { apiGroups: ['serving.knative.dev'], resources: ['services', 'routes'], verbs: read },
    { apiGroups: ['messaging.knative.dev'], resources: ['channels', 'inmemorychannels', 'subscriptions'], verbs: read },
    { apiGroups: ['messaging.knative.dev'], resources: ['channels/status', 'inmemorychannels/status', 'subscriptions/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: ['flows.knative.dev'], resources: ['sequences', 'parallels'], verbs: read },
    { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
    // The event debugger (debug/api.ts) asks who a bearer token is and what they may do.
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ] satisfies PolicyRule[],
} as const;

/** The binding of the role to a subject, e.g. `{ kind: 'ServiceAccount', name: 'broker', namespace: 'kube-system' }`. */
export function brokerClusterRoleBinding(subject: { kind: 'User' | 'Group' | 'ServiceAccount'; name: string; namespace?: string }) {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: BROKER_CLUSTER_ROLE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: BROKER_CLUSTER_ROLE },
    subjects: [subject.kind === 'ServiceAccount' ? subject : { apiGroup: 'rbac.authorization.k8s.io', ...subject }],
  };
}

/** Whether the role allows `verb` on `group`/`resource` (`resource/subresource`): RBAC's matching, for tests and docs. */
export function brokerRoleAllows(verb: string, group: string, resource: string): boolean {
  return brokerClusterRole.rules.some(
    (r) => (r.apiGroups as readonly string[]).includes(group) && (r.resources as readonly string[]).includes(resource) && (r.verbs as readonly string[]).includes(verb),
  );
}
