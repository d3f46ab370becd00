/**
 * A resource type is data (group, version, plural, kind, scope) and its URL is derived from it,
 * as Kubernetes' REST mapping does; the built-in table covers what this project's clients use and
 * `resourceType` makes any other, e.g. a CRD's.
 */

export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export function resourceType(apiVersion: string, kind: string, plural: string, namespaced = true): ResourceType {
  const slash = apiVersion.indexOf('/');
  return { group: slash === -1 ? '' : apiVersion.slice(0, slash), version: slash === -1 ? apiVersion : apiVersion.slice(slash + 1), kind, plural, namespaced };
}

export const apiVersionOf = (t: ResourceType): string => (t.group ? `${t.group}/${t.version}` : t.version);

export const Resources = {
  namespaces: resourceType('v1', 'Namespace', 'namespaces', false),
  nodes: resourceType('v1', 'Node', 'nodes', false),
  pods: resourceType('v1', 'Pod', 'pods'),
  services: resourceType('v1', 'Service', 'services'),
  endpoints: resourceType('v1', 'Endpoints', 'endpoints'),
  secrets: resourceType('v1', 'Secret', 'secrets'),
  configMaps: resourceType('v1', 'ConfigMap', 'configmaps'),
  serviceAccounts: resourceType('v1', 'ServiceAccount', 'serviceaccounts'),
  events: resourceType('v1', 'Event', 'events'),
  replicationControllers: resourceType('v1', 'ReplicationController', 'replicationcontrollers'),
  deployments: resourceType('apps/v1', 'Deployment', 'deployments'),
  replicaSets: resourceType('apps/v1', 'ReplicaSet', 'replicasets'),
  leases: resourceType('coordination.k8s.io/v1', 'Lease', 'leases'),
  knativeServices: resourceType('serving.knative.dev/v1', 'Service', 'services'),
} as const;

export interface PathParts {
  namespace?: string;
  name?: string;
  subresource?: string;
}

const segment = (s: string, what: string): string => {
  if (s === '' || s === '.' || s === '..' || s.includes('/')) throw new Error(`Invalid ${what} ${JSON.stringify(s)}`);
  return encodeURIComponent(s);
};

export function resourcePath(type: ResourceType, parts: PathParts = {}): string {
  let path = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  if (type.namespaced && parts.namespace) path += `/namespaces/${segment(parts.namespace, 'namespace')}`;
  path += `/${type.plural}`;
  if (parts.name !== undefined) path += `/${segment(parts.name, 'name')}`;
  if (parts.subresource) path += `/${parts.subresource}`;
  return path;
}
