/**
 * One valid and one invalid body per kind, for the kind tester. The invalid body names the
 * fields its 422 must list in details.causes. Schemaless kinds share a generic pair.
 */
import type { ResourceDefinition } from '../definition.js';

export interface KindFixture {
  valid: Record<string, unknown>;
  invalid: Record<string, unknown>;
  invalidFields: string[];
}

const containers = [{ name: 'app', image: 'nginx:1.25' }];
/** A PKCS#10 request for CN=jane (ECDSA P-256), base64 as spec.request carries it. */
const csrRequest = 'LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlISk1IRUNBUUF3RHpFTk1Bc0dBMVVFQXd3RWFtRnVaVEJaTUJNR0J5cUdTTTQ5QWdFR0NDcUdTTTQ5QXdFSApBMElBQk1Qb1YyNXJQNkVadUEwYzVBZENJOFZ3ZmxScXQyODNIbjlvVnFBeWpnZlYrcE1WN1RzeTgranFoNXlLCmZIbWYzVlRPQlJaUDRPbUcwUlNSRVBrTHVMU2dBREFLQmdncWhrak9QUVFEQWdOSUFEQkZBaUVBOTdlZ0EwaUsKeEg0NnU3ejgzL0RCRlVZQ0lWMXFha0ZiTDFzc2pNR2FDdHNDSUZFNlNybmhvcThVdC9WNmdxWjNLenNyS09ibQp1L2NuMEt6TjhKT3g1c2FQCi0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=';
const template = { metadata: { labels: { app: 'web' } }, spec: { containers } };

const fixtures: Readonly<Record<string, KindFixture>> = {
  namespaces: { valid: {}, invalid: { metadata: { name: 'Not_Valid' } }, invalidFields: ['metadata.name'] },
  serviceaccounts: { valid: { secrets: [{ name: 's' }] }, invalid: { secrets: [{}] }, invalidFields: ['secrets[0].name'] },
  limitranges: {
    valid: { spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } },
    invalid: { spec: { limits: [{ type: 'Bogus', max: { cpu: 'lots' } }] } },
    invalidFields: ['spec.limits[0].type', 'spec.limits[0].max[cpu]'],
  },
  resourcequotas: { valid: { spec: { hard: { pods: '10' } } }, invalid: { spec: { hard: { pods: 'ten' } } }, invalidFields: ['spec.hard[pods]'] },
  secrets: { valid: { stringData: { user: 'admin' } }, invalid: { data: { user: '!!!' } }, invalidFields: ['data[user]'] },
  persistentvolumeclaims: {
    valid: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } },
    invalid: { spec: {} },
    invalidFields: ['spec.accessModes', 'spec.resources[storage]'],
  },
  persistentvolumes: {
    valid: { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/pv' } } },
    invalid: { spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } },
    invalidFields: ['spec'],
  },
  services: { valid: { spec: { ports: [{ port: 80 }], selector: { app: 'web' } } }, invalid: { spec: { ports: [{ port: 0 }] } }, invalidFields: ['spec.ports[0].port'] },
  securitycontextconstraints: {
    valid: { runAsUser: { type: 'RunAsAny' }, seLinuxContext: { type: 'RunAsAny' } },
    invalid: { runAsUser: { type: 'Nope' } },
    invalidFields: ['runAsUser.type', 'seLinuxContext.type'],
  },
  podtemplates: { valid: { template }, invalid: { template: { spec: { containers: [] } } }, invalidFields: ['template.spec.containers'] },
  replicationcontrollers: {
    valid: { spec: { replicas: 1, selector: { app: 'web' }, template } },
    invalid: { spec: { selector: { app: 'other' }, template } },
    invalidFields: ['spec.template.metadata.labels'],
  },
  pods: { valid: { spec: { containers } }, invalid: { spec: { containers: [{ name: 'app' }] } }, invalidFields: ['spec.containers[0].image'] },
  roles: {
    valid: { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] },
    invalid: { rules: [{ apiGroups: [''], resources: ['pods'] }, { nonResourceURLs: ['/x'], verbs: ['get'] }] },
    invalidFields: ['rules[0].verbs', 'rules[1].nonResourceURLs'],
  },
  clusterroles: {
    valid: { rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }] },
    invalid: { rules: [{ verbs: ['get'] }], aggregationRule: { clusterRoleSelectors: [] } },
    invalidFields: ['rules[0].apiGroups', 'rules[0].resources', 'aggregationRule.clusterRoleSelectors'],
  },
  rolebindings: {
    valid: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'Group', name: 'devs' }] },
    invalid: { roleRef: { kind: 'Nope', name: 'view' }, subjects: [{ kind: 'Robot', name: 'r2' }] },
    invalidFields: ['roleRef.kind', 'subjects[0].kind'],
  },
  clusterrolebindings: {
    valid: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'ci', namespace: 'shop' }] },
    invalid: { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'view' }, subjects: [{ kind: 'ServiceAccount', name: 'ci' }] },
    invalidFields: ['roleRef.kind', 'subjects[0].namespace'],
  },
  configmaps: { valid: { data: { a: 'b' }, binaryData: { c: 'ZA==' } }, invalid: { data: { 'bad key!': 'x' }, binaryData: { b: '!!' } }, invalidFields: ['data', 'binaryData[b]'] },
  endpoints: {
    valid: { subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }] },
    invalid: { subsets: [{ addresses: [{ ip: '169.254.1.1' }], ports: [{ port: 0 }] }] },
    invalidFields: ['subsets[0].addresses[0].ip', 'subsets[0].ports[0].port'],
  },
  events: {
    valid: { involvedObject: { kind: 'Pod', name: 'p', namespace: 'kind-test' }, reason: 'Started', message: 'started', type: 'Normal' },
    invalid: { involvedObject: { kind: 'Pod', name: 'p', namespace: 'elsewhere' } },
    invalidFields: ['involvedObject.namespace'],
  },
  'events.k8s.io/v1 events': {
    valid: { eventTime: '2024-01-01T00:00:00.000000Z', reportingController: 'example.com/ctl', reportingInstance: 'ctl-1', action: 'Scheduled', reason: 'Scheduled', regarding: { kind: 'Pod', name: 'p', namespace: 'kind-test' }, note: 'assigned', type: 'Normal' },
    invalid: { type: 'Bogus', deprecatedCount: 3 },
    invalidFields: ['eventTime', 'type', 'count'],
  },
  nodes: {
    valid: { spec: { podCIDR: '10.244.0.0/24' }, status: { capacity: { cpu: '2' } } },
    invalid: { spec: { podCIDR: 'x', taints: [{ key: 'k', effect: 'Sometimes' }] } },
    invalidFields: ['spec.podCIDR', 'spec.taints[0].effect'],
  },
  deployments: {
    valid: { spec: { selector: { matchLabels: { app: 'web' } }, template } },
    invalid: { spec: { selector: { matchLabels: { app: 'other' } }, template, strategy: { type: 'Sometimes' } } },
    invalidFields: ['spec.template.metadata.labels', 'spec.strategy.type'],
  },
  replicasets: {
    valid: { spec: { selector: { matchLabels: { app: 'web' } }, template } },
    invalid: { spec: { selector: { matchLabels: { app: 'other' } }, template, replicas: -1 } },
    invalidFields: ['spec.template.metadata.labels', 'spec.replicas'],
  },
  statefulsets: {
    valid: { spec: { serviceName: 'web', selector: { matchLabels: { app: 'web' } }, template } },
    invalid: { spec: { selector: { matchExpressions: [{ key: 'app', operator: 'Near' }] }, template, podManagementPolicy: 'Random' } },
    invalidFields: ['spec.selector.matchExpressions[0].operator', 'spec.podManagementPolicy'],
  },
  daemonsets: {
    valid: { spec: { selector: { matchLabels: { app: 'web' } }, template } },
    invalid: { spec: { selector: { matchLabels: { app: 'web' } }, template: { ...template, spec: { containers, restartPolicy: 'Never' } } } },
    invalidFields: ['spec.template.spec.restartPolicy'],
  },
  controllerrevisions: { valid: { data: { spec: { template } }, revision: 1 }, invalid: { revision: -1 }, invalidFields: ['data', 'revision'] },
  horizontalpodautoscalers: {
    valid: { spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 } },
    invalid: { spec: { scaleTargetRef: { kind: 'Deployment' }, minReplicas: 0, maxReplicas: 0 } },
    invalidFields: ['spec.scaleTargetRef.name', 'spec.minReplicas', 'spec.maxReplicas'],
  },
  jobs: {
    valid: { spec: { template: { spec: { containers, restartPolicy: 'Never' } } } },
    invalid: { spec: { template: { spec: { containers, restartPolicy: 'Always' } }, completionMode: 'Sometimes' } },
    invalidFields: ['spec.template.spec.restartPolicy', 'spec.completionMode'],
  },
  cronjobs: {
    valid: { spec: { schedule: '*/5 * * * *', jobTemplate: { spec: { template: { spec: { containers, restartPolicy: 'OnFailure' } } } } } },
    invalid: { spec: { schedule: 'every minute', concurrencyPolicy: 'Sometimes', jobTemplate: { spec: { template: { spec: { containers, restartPolicy: 'OnFailure' } } } } } },
    invalidFields: ['spec.schedule', 'spec.concurrencyPolicy'],
  },
  leases: {
    valid: { spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2024-01-01T00:00:00.000000Z' } },
    invalid: { spec: { leaseDurationSeconds: 0, leaseTransitions: -1, renewTime: 'yesterday' } },
    invalidFields: ['spec.leaseDurationSeconds', 'spec.leaseTransitions', 'spec.renewTime'],
  },
  endpointslices: {
    valid: { addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.1'] }], ports: [{ port: 80 }] },
    invalid: { addressType: 'IPv5', endpoints: [{ addresses: [] }] },
    invalidFields: ['addressType', 'endpoints[0].addresses'],
  },
  ingresses: {
    valid: { spec: { rules: [{ host: 'example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] } }] } },
    invalid: { spec: { rules: [{ http: { paths: [{ path: 'x', pathType: 'Exact', backend: { service: { name: 'web', port: { number: 0 } } } }] } }] } },
    invalidFields: ['spec.rules[0].http.paths[0].path', 'spec.rules[0].http.paths[0].backend.service.port.number'],
  },
  'extensions/v1beta1 ingresses': { valid: { spec: { backend: { serviceName: 'web', servicePort: 80 } } }, invalid: { spec: {} }, invalidFields: ['spec.rules'] },
  ingressclasses: { valid: { spec: { controller: 'example.com/ingress' } }, invalid: { spec: { controller: 'nope' } }, invalidFields: ['spec.controller'] },
  networkpolicies: {
    valid: { spec: { podSelector: {} } },
    invalid: { spec: { podSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] }, policyTypes: ['Sideways'] } },
    invalidFields: ['spec.podSelector.matchExpressions[0].operator', 'spec.policyTypes[0]'],
  },
  poddisruptionbudgets: {
    valid: { spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } },
    invalid: { spec: { minAvailable: 1, maxUnavailable: '200%' } },
    invalidFields: ['spec', 'spec.maxUnavailable'],
  },
  priorityclasses: { valid: { value: 1000 }, invalid: { value: 2000000000, preemptionPolicy: 'Always' }, invalidFields: ['value', 'preemptionPolicy'] },
  certificatesigningrequests: {
    valid: { spec: { request: csrRequest, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], expirationSeconds: 3600 } },
    invalid: { spec: { request: Buffer.from('not a request').toString('base64'), signerName: 'nodomain', usages: ['flying'], expirationSeconds: 60 } },
    invalidFields: ['spec.request', 'spec.signerName', 'spec.usages[0]', 'spec.expirationSeconds'],
  },
  storageclasses: { valid: { provisioner: 'example.com/disk' }, invalid: { reclaimPolicy: 'Recycle' }, invalidFields: ['provisioner', 'reclaimPolicy'] },
};

const schemaless: KindFixture = {
  valid: { spec: { anything: ['as', 'given'], nested: { n: 1 } } },
  invalid: { metadata: { name: 'Not_Valid', labels: { 'bad key!': 'x' } } },
  invalidFields: ['metadata.name', 'metadata.labels'],
};

/**
 * The fixture for a definition, or undefined for kinds that cannot be created (ComponentStatus). A
 * group version whose fields differ from its storage version's has its own (`group/version plural`).
 */
export const fixtureFor = (def: ResourceDefinition): KindFixture | undefined =>
  def.schemaless ? schemaless : (fixtures[`${def.group}/${def.version} ${def.plural}`] ?? fixtures[def.plural]);
