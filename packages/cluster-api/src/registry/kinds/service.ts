/** Service: type ClusterIP by default with a unique clusterIP; clusterIP is immutable once set. */
import type { KubeObject } from '../../api/meta.js';
import { immutable, isDNS1035Label } from '../generic/validation.js';
import { AllButDeleteCollection, arr, child, column, core, obj, setDefault, spec, status, str } from './common.js';
import { statusSubresource } from '../subresources/status.js';
import { serviceProxy } from '../subresources/proxy.js';
import { serviceAllocator, wantsIP, wantsNodePorts } from './service-allocator.js';
import { validateService } from './service-spec.js';

const portsText = (o: KubeObject): string =>
  arr(spec(o).ports).map(obj).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${str(p.protocol) || 'TCP'}`).join(',') || '<none>';

const externalIP = (o: KubeObject): string => {
  const ingress = arr(obj(status(o).loadBalancer).ingress).map(obj).map((i) => str(i.ip) || str(i.hostname));
  const ips = [...arr(spec(o).externalIPs).map(str), ...ingress].filter(Boolean);
  if (ips.length) return ips.join(',');
  if (spec(o).type === 'ExternalName') return str(spec(o).externalName);
  return spec(o).type === 'LoadBalancer' ? '<pending>' : '<none>';
};

/** The Service kind allocating clusterIPs from `serviceCidr` (kube-apiserver's --service-cluster-ip-range). */
export const serviceKind = (serviceCidr?: string) => core({
  kind: 'Service',
  plural: 'services',
  singular: 'service',
  namespaced: true,
  verbs: AllButDeleteCollection,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: { status: statusSubresource(), proxy: serviceProxy },
  nameRule: isDNS1035Label,
  allocator: serviceAllocator(serviceCidr),
  strategy: {
    prepareForCreate(o) {
      const s = child(o, 'spec');
      setDefault(s, 'type', 'ClusterIP');
      setDefault(s, 'sessionAffinity', 'None');
      for (const p of arr(s.ports).map(obj)) {
        setDefault(p, 'protocol', 'TCP');
        setDefault(p, 'targetPort', p.port);
      }
      o.status = { loadBalancer: {} };
    },
    prepareForUpdate(o, old) {
      // kubectl apply/replace often omit allocated values: keep them rather than reject the update;
      // a type that no longer uses them gives them up (they are freed once the update is stored).
      const s = child(o, 'spec');
      if (wantsIP(o)) setDefault(s, 'clusterIP', spec(old).clusterIP);
      else if (s.type === 'ExternalName') delete s.clusterIP;
      const was = arr(spec(old).ports).map(obj);
      for (const p of arr(s.ports).map(obj)) {
        setDefault(p, 'protocol', 'TCP');
        if (wantsNodePorts(o) && wantsNodePorts(old)) setDefault(p, 'nodePort', was.find((w) => w.port === p.port)?.nodePort);
        if (!wantsNodePorts(o) && wantsNodePorts(old)) delete p.nodePort;
      }
    },
    validate: validateService,
    validateUpdate: (o, old) =>
      spec(o).clusterIP === spec(old).clusterIP || spec(o).type === 'ExternalName' || spec(old).type === 'ExternalName'
        ? []
        : [immutable('spec.clusterIP', spec(o).clusterIP)],
    fieldsOf: (o) => ({ 'spec.clusterIP': str(spec(o).clusterIP), 'spec.type': str(spec(o).type) }),
  },
  columns: [
    column('Type', (o) => str(spec(o).type)),
    column('Cluster-IP', (o) => str(spec(o).clusterIP) || '<none>'),
    column('External-IP', externalIP),
    column('Port(s)', portsText),
    column('Selector', (o) => Object.entries(obj(spec(o).selector)).map(([k, v]) => `${k}=${String(v)}`).join(',') || '<none>', { priority: 1 }),
  ],
});

export const service = serviceKind();
