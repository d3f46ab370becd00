/**
 * The ClusterRoles and ClusterRoleBindings of the controllers this server runs, as Kubernetes'
 * bootstrappolicy/controller_policy.go defines them: `system:controller:<name>`, bound to the
 * ServiceAccount `kube-system/<name>` each controller acts as (kube-controller-manager's
 * `--use-service-account-credentials`).
 */
import type { KubeObject } from '../../api/meta.js';
import { clusterRole, clusterRoleBinding, Read, rule, serviceAccount } from './policy-data.js';

/** The prefix of every controller role; the rest is the ServiceAccount's name. */
export const ControllerRolePrefix = 'system:controller:';

const events = rule('create update patch', ' events.k8s.io', 'events');

const roles: Record<string, ReturnType<typeof rule>[]> = {
  'clusterrole-aggregation-controller': [rule('escalate get list watch update patch', 'rbac.authorization.k8s.io', 'clusterroles')],
  'cronjob-controller': [
    rule('get list watch update', 'batch', 'cronjobs'),
    rule('get list watch create update delete patch', 'batch', 'jobs'),
    rule('update', 'batch', 'cronjobs/status'),
    rule('update', 'batch', 'cronjobs/finalizers'),
    rule('list watch delete', '', 'pods'),
    events,
  ],
  'daemon-set-controller': [
    rule(Read, 'extensions apps', 'daemonsets'),
    rule('update', 'extensions apps', 'daemonsets/status'),
    rule('update', 'extensions apps', 'daemonsets/finalizers'),
    rule('list watch', '', 'nodes'),
    rule('list watch create delete patch', '', 'pods'),
    rule('create', '', 'pods/binding'),
    rule('get list watch create delete update patch', 'apps', 'controllerrevisions'),
    events,
  ],
  'horizontal-pod-autoscaler': [
    rule(Read, 'autoscaling', 'horizontalpodautoscalers'),
    rule('update', 'autoscaling', 'horizontalpodautoscalers/status'),
    rule('get update', '*', '*/scale'),
    rule('list watch', '', 'pods'),
    rule('list', 'metrics.k8s.io', 'pods'),
    rule('get list', 'custom.metrics.k8s.io', '*'),
    rule('get list', 'external.metrics.k8s.io', '*'),
    events,
  ],
  'deployment-controller': [
    rule('get list watch update', 'extensions apps', 'deployments'),
    rule('update', 'extensions apps', 'deployments/status'),
    rule('update', 'extensions apps', 'deployments/finalizers'),
    rule('get list watch create update patch delete', 'apps extensions', 'replicasets'),
    rule('get list watch update', '', 'pods'),
    events,
  ],
  'disruption-controller': [
    rule(Read, 'extensions apps', 'deployments'),
    rule(Read, 'apps extensions', 'replicasets'),
    rule(Read, '', 'replicationcontrollers'),
    rule(Read, 'policy', 'poddisruptionbudgets'),
    rule(Read, 'apps', 'statefulsets'),
    rule('update', 'policy', 'poddisruptionbudgets/status'),
    rule('get', '*', '*/scale'),
    events,
  ],
  'endpoint-controller': [
    rule(Read, '', 'services pods'),
    rule('get list watch create update delete', '', 'endpoints'),
    rule('create', '', 'endpoints/restricted'),
    events,
  ],
  'endpointslice-controller': [
    rule(Read, '', 'services pods nodes'),
    rule('update', '', 'services/finalizers'),
    rule('get list watch create update delete', 'discovery.k8s.io', 'endpointslices'),
    events,
  ],
  'generic-garbage-collector': [rule('get list watch patch update delete', '*', '*'), events],
  'job-controller': [
    rule('get list watch update patch', 'batch', 'jobs'),
    rule('update', 'batch', 'jobs/status'),
    rule('update', 'batch', 'jobs/finalizers'),
    rule('list watch create delete patch', '', 'pods'),
    events,
  ],
  'namespace-controller': [
    rule('get list watch delete', '', 'namespaces'),
    rule('update', '', 'namespaces/finalize namespaces/status'),
    rule('get list watch delete deletecollection', '*', '*'),
  ],
  'node-controller': [
    rule('get list watch update delete patch', '', 'nodes'),
    rule('patch update', '', 'nodes/status'),
    rule('patch update', '', 'pods/status'),
    rule('list watch get delete', '', 'pods'),
    events,
  ],
  'pod-garbage-collector': [
    rule('list watch delete', '', 'pods'),
    rule(Read, '', 'nodes'),
    rule('patch', '', 'pods/status'),
  ],
  'replicaset-controller': [
    rule('get list watch update', 'apps extensions', 'replicasets'),
    rule('update', 'apps extensions', 'replicasets/status'),
    rule('update', 'apps extensions', 'replicasets/finalizers'),
    rule('list watch patch create delete', '', 'pods'),
    events,
  ],
  'replication-controller': [
    rule('get list watch update', '', 'replicationcontrollers'),
    rule('update', '', 'replicationcontrollers/status'),
    rule('update', '', 'replicationcontrollers/finalizers'),
    rule('list watch patch create delete', '', 'pods'),
    events,
  ],
  'statefulset-controller': [
    rule('list watch', '', 'pods'),
    rule(Read, 'apps', 'statefulsets'),
    rule('update', 'apps', 'statefulsets/status'),
    rule('update', 'apps', 'statefulsets/finalizers'),
    rule('get create delete update patch', '', 'pods'),
    rule('get create delete update patch list watch', 'apps', 'controllerrevisions'),
    rule('get create list watch', '', 'persistentvolumeclaims'),
    rule('update delete', '', 'persistentvolumeclaims'),
    rule('update', '', 'pods/finalizers'),
    events,
  ],
  'resourcequota-controller': [rule('list watch', '*', '*'), rule('update', '', 'resourcequotas/status'), events],
  // The serving controllers (Knative Serving's controller): its kinds, and the Deployments and Services revisions run as.
  'serving-controller': [
    rule('get list watch create update patch delete', 'serving.knative.dev', 'services configurations revisions routes domainmappings'),
    rule('update', 'serving.knative.dev', 'services/status configurations/status revisions/status routes/status domainmappings/status services/finalizers configurations/finalizers revisions/finalizers routes/finalizers'),
    rule('get list watch create update patch delete', 'apps', 'deployments'),
    rule('get list watch create update patch delete', '', 'services'),
    rule(Read, '', 'pods configmaps endpoints'),
    events,
  ],
  // The source controllers (Knative Eventing's controller and its adapters): the sources, what their
  // sinks and subjects name (any kind: read), the workloads SinkBindings bind and ContainerSources run.
  'eventing-controller': [
    rule('get list watch create update patch delete', 'sources.knative.dev', 'pingsources apiserversources sinkbindings containersources'),
    rule('update', 'sources.knative.dev', 'pingsources/status apiserversources/status sinkbindings/status containersources/status pingsources/finalizers apiserversources/finalizers sinkbindings/finalizers containersources/finalizers'),
    rule(Read, '*', '*'),
    rule('get list watch create update patch delete', 'apps', 'deployments statefulsets daemonsets replicasets'),
    rule('update patch', 'batch', 'jobs cronjobs'),
    rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
    // An ApiServerSource's adapter acts as the ServiceAccount the source names (a Deployment of that
    // account in Knative); apart from the API server, the controller impersonates it.
    rule('impersonate', '', 'serviceaccounts'),
    events,
  ],
  // Knative Eventing's flows: Sequences and Parallels, the channels and Subscriptions they are made of;
  // and Channels' backing InMemoryChannels (messaging-channel-controller).
  'flows-controller': [
    rule(Read, 'flows.knative.dev', 'sequences parallels'),
    rule('update', 'flows.knative.dev', 'sequences/status parallels/status sequences/finalizers parallels/finalizers'),
    rule('get list watch create update patch delete', 'messaging.knative.dev', 'channels inmemorychannels subscriptions'),
    events,
  ],
  'ttl-after-finished-controller': [rule('get list watch delete', 'batch', 'jobs'), events],
  // csrapproving, csrsigning and csrcleaner (the built-in signers' names as resourceNames).
  'certificate-controller': [
    rule('delete get list watch', 'certificates.k8s.io', 'certificatesigningrequests'),
    rule('update', 'certificates.k8s.io', 'certificatesigningrequests/approval certificatesigningrequests/status'),
    rule('approve', 'certificates.k8s.io', 'signers', 'kubernetes.io/kube-apiserver-client-kubelet kubernetes.io/legacy-unknown'),
    rule('sign', 'certificates.k8s.io', 'signers', 'kubernetes.io/kube-apiserver-client kubernetes.io/kube-apiserver-client-kubelet kubernetes.io/kubelet-serving kubernetes.io/legacy-unknown'),
    rule('create', 'authorization.k8s.io', 'subjectaccessreviews'),
    events,
  ],
};

export const controllerClusterRoles: readonly KubeObject[] = Object.entries(roles).map(([name, rules]) => clusterRole(ControllerRolePrefix + name, rules));

export const controllerClusterRoleBindings: readonly KubeObject[] = Object.keys(roles).map((name) =>
  clusterRoleBinding(ControllerRolePrefix + name, [serviceAccount('kube-system', name)]));
