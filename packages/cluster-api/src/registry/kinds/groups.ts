/**
 * The extra API groups of the spec's "Groups with their versions" table. kubectl's discovery fails on
 * a group version that lists no resources, so each version lists the resources that Kubernetes 1.7 /
 * OpenShift 3.7 (the releases with exactly these group versions) served there. They are schemaless
 * (metadata validated, the rest stored as given, like a CustomResourceDefinition without a schema);
 * the review kinds only answer creates.
 *
 * Kinds served typed (apps, batch, policy, networking, storage, autoscaling) are in kinds/index.ts,
 * at these group versions too.
 *
 * Row: plural, Kind, scope (N namespaced / C cluster), shortNames, flags (`all` category, `review`
 * create-only, `read` get+list only).
 */
import type { ResourceDefinition, Verb } from '../definition.js';
import { AllVerbs } from './common.js';
import { openshiftReviewKinds } from './openshift-reviews.js';
import { reviewKinds } from './reviews.js';

type Row = readonly [plural: string, kind: string, scope: 'N' | 'C', shortNames?: string, flags?: 'all' | 'review' | 'read'];

/** Versions in preference order: the first is the group's preferredVersion. */
export const ExtraGroups: readonly { group: string; versions: readonly string[]; resources: readonly Row[] }[] = [
  { group: 'apps.openshift.io', versions: ['v1'], resources: [['deploymentconfigs', 'DeploymentConfig', 'N', 'dc', 'all']] },
  // selfsubjectreviews came with Kubernetes 1.26-1.28; `kubectl auth whoami` asks for it.
  { group: 'authentication.k8s.io', versions: ['v1', 'v1beta1'], resources: [
    ['selfsubjectreviews', 'SelfSubjectReview', 'C', '', 'review'], ['tokenreviews', 'TokenReview', 'C', '', 'review']] },
  { group: 'authorization.k8s.io', versions: ['v1', 'v1beta1'], resources: [
    ['localsubjectaccessreviews', 'LocalSubjectAccessReview', 'N', '', 'review'],
    ['selfsubjectaccessreviews', 'SelfSubjectAccessReview', 'C', '', 'review'],
    ['selfsubjectrulesreviews', 'SelfSubjectRulesReview', 'C', '', 'review'],
    ['subjectaccessreviews', 'SubjectAccessReview', 'C', '', 'review']] },
  { group: 'authorization.openshift.io', versions: ['v1'], resources: [
    ['clusterrolebindings', 'ClusterRoleBinding', 'C'], ['clusterroles', 'ClusterRole', 'C'],
    ['localresourceaccessreviews', 'LocalResourceAccessReview', 'N', '', 'review'],
    ['localsubjectaccessreviews', 'LocalSubjectAccessReview', 'N', '', 'review'],
    ['resourceaccessreviews', 'ResourceAccessReview', 'C', '', 'review'],
    ['rolebindingrestrictions', 'RoleBindingRestriction', 'N'], ['rolebindings', 'RoleBinding', 'N'], ['roles', 'Role', 'N'],
    ['selfsubjectrulesreviews', 'SelfSubjectRulesReview', 'N', '', 'review'],
    ['subjectaccessreviews', 'SubjectAccessReview', 'C', '', 'review'],
    ['subjectrulesreviews', 'SubjectRulesReview', 'N', '', 'review']] },
  { group: 'build.openshift.io', versions: ['v1'], resources: [
    ['buildconfigs', 'BuildConfig', 'N', 'bc', 'all'], ['builds', 'Build', 'N', '', 'all']] },
  // Its daemonsets, deployments, ingresses, networkpolicies and replicasets are the typed apps/v1 and networking.k8s.io/v1 objects (kinds/index.ts).
  { group: 'extensions', versions: ['v1beta1'], resources: [['podsecuritypolicies', 'PodSecurityPolicy', 'C', 'psp']] },
  { group: 'image.openshift.io', versions: ['v1'], resources: [
    ['images', 'Image', 'C'], ['imagestreamimports', 'ImageStreamImport', 'N', '', 'review'],
    ['imagestreams', 'ImageStream', 'N', 'is', 'all'], ['imagestreamtags', 'ImageStreamTag', 'N', 'istag']] },
  { group: 'network.openshift.io', versions: ['v1'], resources: [
    ['clusternetworks', 'ClusterNetwork', 'C'], ['egressnetworkpolicies', 'EgressNetworkPolicy', 'N'],
    ['hostsubnets', 'HostSubnet', 'C'], ['netnamespaces', 'NetNamespace', 'C']] },
  { group: 'oauth.openshift.io', versions: ['v1'], resources: [
    ['oauthaccesstokens', 'OAuthAccessToken', 'C'], ['oauthauthorizetokens', 'OAuthAuthorizeToken', 'C'],
    ['oauthclientauthorizations', 'OAuthClientAuthorization', 'C'], ['oauthclients', 'OAuthClient', 'C']] },
  { group: 'project.openshift.io', versions: ['v1'], resources: [
    ['projectrequests', 'ProjectRequest', 'C', '', 'review'], ['projects', 'Project', 'C']] },
  { group: 'quota.openshift.io', versions: ['v1'], resources: [
    ['appliedclusterresourcequotas', 'AppliedClusterResourceQuota', 'N', '', 'read'],
    ['clusterresourcequotas', 'ClusterResourceQuota', 'C', 'clusterquota']] },
  { group: 'route.openshift.io', versions: ['v1'], resources: [['routes', 'Route', 'N', '', 'all']] },
  { group: 'security.openshift.io', versions: ['v1'], resources: [
    ['podsecuritypolicyreviews', 'PodSecurityPolicyReview', 'N', '', 'review'],
    ['podsecuritypolicyselfsubjectreviews', 'PodSecurityPolicySelfSubjectReview', 'N', '', 'review'],
    ['podsecuritypolicysubjectreviews', 'PodSecurityPolicySubjectReview', 'N', '', 'review'],
    ['securitycontextconstraints', 'SecurityContextConstraints', 'C', 'scc']] },
  { group: 'template.openshift.io', versions: ['v1'], resources: [
    ['brokertemplateinstances', 'BrokerTemplateInstance', 'C'], ['processedtemplates', 'Template', 'N', '', 'review'],
    ['templateinstances', 'TemplateInstance', 'N'], ['templates', 'Template', 'N']] },
  { group: 'user.openshift.io', versions: ['v1'], resources: [
    ['groups', 'Group', 'C'], ['identities', 'Identity', 'C'], ['users', 'User', 'C']] },
];

const verbsFor = (flags: Row[4]): readonly Verb[] => (flags === 'review' ? ['create'] : flags === 'read' ? ['get', 'list'] : AllVerbs);

/** Kinds here that have a protobuf message (kubectl posts and reads them in protobuf): typed, not schemaless. */
const typed = new Set(['authorization.k8s.io/v1', 'authentication.k8s.io/v1']);

const answered = (group: string, kind: string) => reviewKinds[`${group}/${kind}`] ?? openshiftReviewKinds[`${group}/${kind}`];

const definition = (group: string, version: string, [plural, kind, scope, shortNames, flags]: Row): ResourceDefinition => ({
  group,
  version,
  kind,
  listKind: `${kind}List`,
  plural,
  singular: kind.toLowerCase(),
  namespaced: scope === 'N',
  verbs: verbsFor(flags),
  ...(shortNames ? { shortNames: shortNames.split(',') } : {}),
  ...(flags === 'all' ? { categories: ['all'] } : {}),
  ...(flags === 'review' ? { ephemeral: true } : {}),
  // The review kinds' validation and answers (reviews.ts, openshift-reviews.ts); other reviews answer as posted.
  strategy: answered(group, kind)?.strategy ?? {},
  answer: answered(group, kind)?.answer,
  schemaless: !typed.has(`${group}/${version}`),
});

export const groupKinds: readonly ResourceDefinition[] = ExtraGroups.flatMap(({ group, versions, resources }) =>
  versions.flatMap((version) => resources.map((row) => definition(group, version, row))));
