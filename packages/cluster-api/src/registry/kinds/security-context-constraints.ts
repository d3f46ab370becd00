/**
 * SecurityContextConstraints: OpenShift's kind, served in the core group as the spec lists it. It has
 * no spec/status: the strategies are top-level fields.
 */
import type { KubeObject } from '../../api/meta.js';
import { notSupported, required, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, column, core, obj, str } from './common.js';

const RunAsUser = ['MustRunAs', 'MustRunAsNonRoot', 'MustRunAsRange', 'RunAsAny'] as const;
const SELinux = ['MustRunAs', 'RunAsAny'] as const;
const Groups = ['MustRunAs', 'RunAsAny'] as const;

const strategyType = (o: KubeObject, field: string, allowed: readonly string[], needed: boolean): FieldError[] => {
  const t = obj(o[field]).type;
  if (t === undefined || t === '') return needed ? [required(`${field}.type`)] : [];
  return allowed.includes(str(t)) ? [] : [notSupported(`${field}.type`, t, allowed)];
};

const validate = (o: KubeObject): FieldError[] => [
  ...strategyType(o, 'runAsUser', RunAsUser, true),
  ...strategyType(o, 'seLinuxContext', SELinux, true),
  ...strategyType(o, 'fsGroup', Groups, false),
  ...strategyType(o, 'supplementalGroups', Groups, false),
];

const list = (v: unknown): string => (arr(v).length ? `[${arr(v).map(String).join(' ')}]` : '<none>');

export const securityContextConstraints = core({
  kind: 'SecurityContextConstraints',
  plural: 'securitycontextconstraints',
  singular: 'securitycontextconstraints',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['scc'],
  fields: [
    'allowHostDirVolumePlugin', 'allowHostIPC', 'allowHostNetwork', 'allowHostPID', 'allowHostPorts', 'allowPrivilegeEscalation',
    'allowPrivilegedContainer', 'allowedCapabilities', 'allowedFlexVolumes', 'allowedUnsafeSysctls', 'defaultAddCapabilities',
    'defaultAllowPrivilegeEscalation', 'forbiddenSysctls', 'fsGroup', 'groups', 'priority', 'readOnlyRootFilesystem',
    'requiredDropCapabilities', 'runAsUser', 'seLinuxContext', 'seccompProfiles', 'supplementalGroups', 'users', 'volumes',
  ],
  strategy: { validate },
  columns: [
    column('Priv', (o) => String(o.allowPrivilegedContainer === true)),
    column('Caps', (o) => list(o.allowedCapabilities)),
    column('SELinux', (o) => str(obj(o.seLinuxContext).type)),
    column('RunAsUser', (o) => str(obj(o.runAsUser).type)),
    column('FSGroup', (o) => str(obj(o.fsGroup).type)),
    column('SupGroup', (o) => str(obj(o.supplementalGroups).type)),
    column('Priority', (o) => (o.priority === undefined || o.priority === null ? '<none>' : String(o.priority))),
    column('ReadOnlyRootFS', (o) => String(o.readOnlyRootFilesystem === true)),
    column('Volumes', (o) => list(o.volumes)),
  ],
});
