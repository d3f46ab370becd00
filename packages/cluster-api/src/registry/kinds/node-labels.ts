/**
 * Which Node labels a node may not set, add, change or remove itself (NodeRestriction's
 * getForbiddenLabels with kubelet's well-known labels, k8s.io/kubelet/pkg/apis): anything under
 * `node-restriction.kubernetes.io/`, reserved for administrators to steer workloads, and any other label
 * in the kubernetes.io or k8s.io namespaces (the domain or a subdomain) but those kubelets set.
 */

/** The labels kubelets set on their Node (LabelHostname, topology, instance type, OS and arch, GA and beta). */
const KubeletLabels = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);

/** Label namespaces kubelets own, with their subdomains. */
const KubeletDomains = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const namespaceOf = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inDomain = (namespace: string, domain: string): boolean => namespace === domain || namespace.endsWith(`.${domain}`);

const forbidden = (key: string): boolean => {
  const ns = namespaceOf(key);
  if (inDomain(ns, 'node-restriction.kubernetes.io')) return true;
  const kubernetes = inDomain(ns, 'kubernetes.io') || inDomain(ns, 'k8s.io');
  return kubernetes && !KubeletLabels.has(key) && !KubeletDomains.some((d) => inDomain(ns, d));
};

/** Of the label keys a write changes, those a node may not change, sorted (as Kubernetes lists them). */
export const forbiddenNodeLabels = (changed: Iterable<string>): string[] => [...changed].filter(forbidden).sort();
