/**
 * One valid and one invalid body per core kind, for the kind tester. The invalid body names the
 * fields its 422 must list in details.causes. Schemaless kinds share a generic pair.
 */
import type { ResourceDefinition } from '../definition.js';

export interface KindFixture {
  valid: Record<string, unknown>;
  invalid: Record<string, unknown>;
  invalidFields: string[];
}

const containers = [{ name: 'app', image: 'nginx:1.25' }];
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
};

const schemaless: KindFixture = {
  valid: { spec: { anything: ['as', 'given'], nested: { n: 1 } } },
  invalid: { metadata: { name: 'Not_Valid', labels: { 'bad key!': 'x' } } },
  invalidFields: ['metadata.name', 'metadata.labels'],
};

/** The fixture for a definition, or undefined for kinds that cannot be created (ComponentStatus). */
export const fixtureFor = (def: ResourceDefinition): KindFixture | undefined =>
  def.schemaless ? schemaless : fixtures[def.plural];
