/**
 * NetworkPolicy (networking.k8s.io/v1; also extensions/v1beta1, the same fields): which traffic the
 * selected pods accept and send. Defaults as SetDefaults_NetworkPolicy (ports TCP; policyTypes
 * Ingress, plus Egress when egress rules are given), ValidateNetworkPolicySpec for selectors, ports,
 * peers and policy types.
 */
import type { KubeObject } from '../../api/meta.js';
import { invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { servedAt } from '../versions.js';
import { AllVerbs, arr, child, column, inGroup, obj, setDefault, spec, type Obj } from './common.js';
import { formatLabelSelector, validateLabelSelector } from './label-selector.js';
import { Protocols } from './addresses.js';

const PolicyTypes = ['Ingress', 'Egress'] as const;

const defaults = (o: KubeObject): void => {
  const s = child(o, 'spec');
  for (const dir of ['ingress', 'egress']) {
    for (const rule of arr(s[dir]).map(obj)) for (const p of arr(rule.ports)) if (p && typeof p === 'object') setDefault(p as Obj, 'protocol', 'TCP');
  }
  if (arr(s.policyTypes).length === 0) s.policyTypes = arr(s.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
};

const validatePeers = (peers: Obj[], at: string): FieldError[] =>
  peers.flatMap((p, i) => {
    const f = `${at}[${i}]`;
    const set = ['podSelector', 'namespaceSelector', 'ipBlock'].filter((k) => p[k] !== undefined && p[k] !== null);
    if (set.length === 0) return [required(f, 'must specify a peer')];
    if (p.ipBlock && set.length > 1) return [invalidValue(f, '', 'may not specify both ipBlock and another peer')];
    const errs = [...validateLabelSelector(p.podSelector, `${f}.podSelector`), ...validateLabelSelector(p.namespaceSelector, `${f}.namespaceSelector`)];
    if (p.ipBlock && !String(obj(p.ipBlock).cidr ?? '')) errs.push(required(`${f}.ipBlock.cidr`));
    return errs;
  });

const validatePorts = (ports: Obj[], at: string): FieldError[] =>
  ports.flatMap((p, i) => {
    const f = `${at}[${i}]`;
    const errs: FieldError[] = [];
    if (p.protocol !== undefined && !Protocols.includes(p.protocol as never)) errs.push(notSupported(`${f}.protocol`, p.protocol, Protocols));
    if (typeof p.port === 'number' && !(Number.isInteger(p.port) && p.port >= 1 && p.port <= 65535)) errs.push(invalidValue(`${f}.port`, p.port, 'must be between 1 and 65535, inclusive'));
    if (p.endPort !== undefined && typeof p.port !== 'number') errs.push(required(`${f}.port`, 'must be specified when endPort is specified'));
    else if (typeof p.endPort === 'number' && typeof p.port === 'number' && p.endPort < p.port) errs.push(invalidValue(`${f}.endPort`, p.endPort, 'must be greater than or equal to `port`'));
    return errs;
  });

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = validateLabelSelector(s.podSelector, 'spec.podSelector');
  arr(s.ingress).map(obj).forEach((r, i) => errs.push(...validatePorts(arr(r.ports).map(obj), `spec.ingress[${i}].ports`), ...validatePeers(arr(r.from).map(obj), `spec.ingress[${i}].from`)));
  arr(s.egress).map(obj).forEach((r, i) => errs.push(...validatePorts(arr(r.ports).map(obj), `spec.egress[${i}].ports`), ...validatePeers(arr(r.to).map(obj), `spec.egress[${i}].to`)));
  const types = arr(s.policyTypes);
  types.forEach((t, i) => { if (!PolicyTypes.includes(t as never)) errs.push(notSupported(`spec.policyTypes[${i}]`, t, PolicyTypes)); });
  if (types.length > 2) errs.push(invalidValue('spec.policyTypes', types, 'may not specify more than two policyTypes'));
  return errs;
};

export const networkPolicy = inGroup('networking.k8s.io', 'v1')({
  kind: 'NetworkPolicy',
  plural: 'networkpolicies',
  singular: 'networkpolicy',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['netpol'],
  fields: ['spec'],
  strategy: { prepareForCreate: defaults, prepareForUpdate: defaults, validate },
  columns: [column('Pod-Selector', (o) => formatLabelSelector(spec(o).podSelector), { description: 'Selects the pods to which this NetworkPolicy object applies.' })],
});

export const networkPolicyExtensions = servedAt(networkPolicy, { group: 'extensions', version: 'v1beta1' }, { shortNames: undefined });
