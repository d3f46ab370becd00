/**
 * Node (core/v1, cluster-scoped): registered by a node agent with its status (a create keeps
 * status; afterwards only /status writes it), the spec fields Kubernetes' node strategy guards
 * (podCIDR and providerID only from "" to a value; taints unique by key and effect), allocatable
 * defaulting to capacity, and `kubectl get nodes` columns. nodes/proxy answers as kube-apiserver
 * does when no kubelet answers (subresources/node-proxy.ts).
 */
import { isIP } from 'node:net';
import type { KubeObject } from '../../api/meta.js';
import { check, duplicate, forbiddenField, invalidValue, isQualifiedName, notSupported, required, type FieldError } from '../generic/validation.js';
import { nodeProxy } from '../subresources/node-proxy.js';
import { nodeRestriction } from './node-restriction.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, arr, child, column, core, obj, spec, status, str } from './common.js';
import { ageColumn, nameColumn } from './columns.js';
import { validateResourceList } from './quantities.js';

const TaintEffects = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

const isCIDR = (v: string): boolean => {
  const [ip = '', bits, ...rest] = v.split('/');
  const family = isIP(ip);
  return rest.length === 0 && family !== 0 && /^\d+$/.test(bits ?? '') && Number(bits) <= (family === 4 ? 32 : 128);
};

const defaultStatus = (o: KubeObject): void => {
  const st = obj(o.status);
  if (st.capacity && !st.allocatable) child(o, 'status').allocatable = { ...obj(st.capacity) };
};

const validateTaints = (taints: unknown[]): FieldError[] => {
  const seen = new Set<string>();
  return taints.map(obj).flatMap((t, i) => {
    const at = `spec.taints[${i}]`;
    const errs = str(t.key) ? check(`${at}.key`, str(t.key), isQualifiedName) : [required(`${at}.key`)];
    if (!TaintEffects.includes(t.effect as never)) errs.push(notSupported(`${at}.effect`, t.effect ?? '', TaintEffects));
    const id = `${str(t.key)}/${str(t.effect)}`;
    if (seen.has(id)) errs.push(duplicate(`spec.taints[${i}]`, 'taints must be unique by key and effect pair'));
    seen.add(id);
    return errs;
  });
};

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = validateTaints(arr(s.taints));
  const cidrs = [...(str(s.podCIDR) ? [str(s.podCIDR)] : []), ...arr(s.podCIDRs).map(str)];
  cidrs.forEach((c, i) => {
    if (!isCIDR(c)) errs.push(invalidValue(i === 0 && s.podCIDR ? 'spec.podCIDR' : `spec.podCIDRs[${i}]`, c, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'));
  });
  errs.push(...validateResourceList(status(o).capacity, 'status.capacity'), ...validateResourceList(status(o).allocatable, 'status.allocatable'));
  return errs;
};

/** podCIDR(s) and providerID: only from unset to a value. */
const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  for (const f of ['podCIDR', 'providerID']) {
    const [was, now] = [str(spec(old)[f]), str(spec(o)[f])];
    if (was && was !== now) errs.push(forbiddenField(`spec.${f}`, `node updates may not change ${f} except from "" to valid`));
  }
  if (arr(spec(old).podCIDRs).length && JSON.stringify(spec(old).podCIDRs) !== JSON.stringify(spec(o).podCIDRs)) {
    errs.push(forbiddenField('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  return errs;
};

const conditionStatus = (o: KubeObject): string => {
  const ready = arr(status(o).conditions).map(obj).find((c) => c.type === 'Ready');
  const state = ready ? (ready.status === 'True' ? ['Ready'] : ['NotReady']) : ['Unknown'];
  if (spec(o).unschedulable === true) state.push('SchedulingDisabled');
  return state.join(',');
};

/** node-role.kubernetes.io/<role> labels and kubernetes.io/role=<role>, sorted. */
const roles = (o: KubeObject): string => {
  const found = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length) found.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && v) found.add(v);
  }
  return [...found].sort().join(',') || '<none>';
};

const address = (type: string) => (o: KubeObject): string =>
  str(arr(status(o).addresses).map(obj).find((a) => a.type === type)?.address) || '<none>';
const info = (field: string, unknown = true) => (o: KubeObject): string => str(obj(status(o).nodeInfo)[field]) || (unknown ? '<unknown>' : '');

export const node = core({
  kind: 'Node',
  plural: 'nodes',
  singular: 'node',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['no'],
  subresources: { status: statusSubresource({ prepareForUpdate: defaultStatus, validate }, { keptOnCreate: true }), proxy: nodeProxy },
  hooks: { admit: nodeRestriction },
  strategy: {
    prepareForCreate: defaultStatus,
    validate,
    validateUpdate,
    fieldsOf: (o) => ({ 'spec.unschedulable': String(spec(o).unschedulable === true) }),
  },
  columnLayout: 'own',
  columns: [
    nameColumn,
    column('Status', conditionStatus, { description: 'The status of the node' }),
    column('Roles', roles, { description: 'The roles of the node' }),
    ageColumn,
    column('Version', info('kubeletVersion', false), { description: 'Kubelet Version reported by the node.' }),
    column('Internal-IP', address('InternalIP'), { priority: 1, description: 'List of addresses reachable to the node.' }),
    column('External-IP', address('ExternalIP'), { priority: 1, description: 'List of addresses reachable to the node.' }),
    column('OS-Image', info('osImage'), { priority: 1, description: 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).' }),
    column('Kernel-Version', info('kernelVersion'), { priority: 1, description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)." }),
    column('Container-Runtime', info('containerRuntimeVersion'), { priority: 1, description: 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).' }),
  ],
});

