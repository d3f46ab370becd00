/**
 * The SecurityContextConstraints every cluster starts with, as OpenShift's kube-apiserver operator
 * creates them (their fields, priorities, users and groups): created at start when missing, an
 * existing one left as its owner changed it. `restricted-v2` is what every authenticated user may
 * use (the `system:openshift:scc:restricted-v2` ClusterRoleBinding, auth/bootstrap/scc-roles.ts);
 * `anyuid` has priority 10; the others none.
 */
import type { KubeObject } from '../../api/meta.js';

const Volumes = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret'];
const V1Drops = ['KILL', 'MKNOD', 'SETUID', 'SETGID'];

interface Fields {
  description: string;
  priority?: number;
  host?: Partial<Record<'allowHostDirVolumePlugin' | 'allowHostIPC' | 'allowHostNetwork' | 'allowHostPID' | 'allowHostPorts', boolean>>;
  privileged?: boolean;
  /** The v2 SCCs: no privilege escalation, every capability dropped but NET_BIND_SERVICE allowed, runtime/default seccomp. */
  v2?: boolean;
  requiredDrop?: string[];
  runAsUser: string;
  seLinux: string;
  fsGroup: string;
  supplementalGroups: string;
  volumes?: string[];
  users?: string[];
  groups?: string[];
}

const scc = (name: string, f: Fields): KubeObject => ({
  apiVersion: 'v1',
  kind: 'SecurityContextConstraints',
  metadata: {
    name,
    annotations: { 'kubernetes.io/description': f.description, 'include.release.openshift.io/self-managed-high-availability': 'true' },
  },
  allowHostDirVolumePlugin: false,
  allowHostIPC: false,
  allowHostNetwork: false,
  allowHostPID: false,
  allowHostPorts: false,
  ...f.host,
  allowPrivilegeEscalation: !f.v2,
  allowPrivilegedContainer: f.privileged === true,
  allowedCapabilities: f.privileged ? ['*'] : f.v2 ? ['NET_BIND_SERVICE'] : null,
  ...(f.privileged && { allowedUnsafeSysctls: ['*'] }),
  defaultAddCapabilities: null,
  fsGroup: { type: f.fsGroup },
  groups: f.groups ?? [],
  priority: f.priority ?? null,
  readOnlyRootFilesystem: false,
  requiredDropCapabilities: f.v2 ? ['ALL'] : f.requiredDrop ?? null,
  runAsUser: { type: f.runAsUser },
  seLinuxContext: { type: f.seLinux },
  ...(f.v2 && { seccompProfiles: ['runtime/default'] }),
  ...(f.privileged && { seccompProfiles: ['*'] }),
  supplementalGroups: { type: f.supplementalGroups },
  users: f.users ?? [],
  volumes: f.volumes ?? Volumes,
});

export const DefaultSccs: readonly KubeObject[] = [
  scc('anyuid', {
    description: 'anyuid provides all features of the restricted SCC but allows users to run with any UID and any GID.',
    priority: 10, requiredDrop: ['MKNOD'], runAsUser: 'RunAsAny', seLinux: 'MustRunAs', fsGroup: 'RunAsAny', supplementalGroups: 'RunAsAny', groups: ['system:cluster-admins'],
  }),
  scc('hostaccess', {
    description: 'hostaccess allows access to all host namespaces but still requires pods to be run with a UID and SELinux context that are allocated to the namespace.',
    host: { allowHostDirVolumePlugin: true, allowHostIPC: true, allowHostNetwork: true, allowHostPID: true, allowHostPorts: true },
    requiredDrop: V1Drops, runAsUser: 'MustRunAsRange', seLinux: 'MustRunAs', fsGroup: 'MustRunAs', supplementalGroups: 'RunAsAny', volumes: [...Volumes, 'hostPath'].sort(),
  }),
  scc('hostmount-anyuid', {
    description: 'hostmount-anyuid provides all the features of the restricted SCC but allows host mounts and any UID by a pod.',
    host: { allowHostDirVolumePlugin: true }, requiredDrop: ['MKNOD'], runAsUser: 'RunAsAny', seLinux: 'MustRunAs', fsGroup: 'RunAsAny', supplementalGroups: 'RunAsAny',
    volumes: [...Volumes, 'hostPath', 'nfs'].sort(), users: ['system:serviceaccount:openshift-infra:pv-recycler-controller'],
  }),
  scc('hostnetwork', {
    description: 'hostnetwork allows using host networking and host ports but still requires pods to be run with a UID and SELinux context that are allocated to the namespace.',
    host: { allowHostNetwork: true, allowHostPorts: true }, requiredDrop: V1Drops, runAsUser: 'MustRunAsRange', seLinux: 'MustRunAs', fsGroup: 'MustRunAs', supplementalGroups: 'MustRunAs',
  }),
  scc('hostnetwork-v2', {
    description: 'hostnetwork allows using host networking and host ports but still requires pods to be run with a UID and SELinux context that are allocated to the namespace.',
    host: { allowHostNetwork: true, allowHostPorts: true }, v2: true, runAsUser: 'MustRunAsRange', seLinux: 'MustRunAs', fsGroup: 'MustRunAs', supplementalGroups: 'MustRunAs',
  }),
  scc('nonroot', {
    description: 'nonroot provides all features of the restricted SCC but allows users to run with any non-root UID.  The user must specify the UID or it must be specified on the by the manifest of the container runtime.',
    requiredDrop: V1Drops, runAsUser: 'MustRunAsNonRoot', seLinux: 'MustRunAs', fsGroup: 'RunAsAny', supplementalGroups: 'RunAsAny',
  }),
  scc('nonroot-v2', {
    description: 'nonroot provides all features of the restricted SCC but allows users to run with any non-root UID.  The user must specify the UID or it must be specified on the by the manifest of the container runtime. On top of the legacy \'nonroot\' SCC, it also requires to drop ALL capabilities and does not allow privilege escalation binaries. It will also default the seccomp profile to runtime/default if unset, otherwise this seccomp profile is required.',
    v2: true, runAsUser: 'MustRunAsNonRoot', seLinux: 'MustRunAs', fsGroup: 'RunAsAny', supplementalGroups: 'RunAsAny',
  }),
  scc('privileged', {
    description: 'privileged allows access to all privileged and host features and the ability to run as any user, any group, any fsGroup, and with any SELinux context.  WARNING: this is the most relaxed SCC and should be used only for cluster administration. Grant with caution.',
    host: { allowHostDirVolumePlugin: true, allowHostIPC: true, allowHostNetwork: true, allowHostPID: true, allowHostPorts: true },
    privileged: true, runAsUser: 'RunAsAny', seLinux: 'RunAsAny', fsGroup: 'RunAsAny', supplementalGroups: 'RunAsAny', volumes: ['*'],
    users: ['system:admin', 'system:serviceaccount:openshift-infra:build-controller'], groups: ['system:cluster-admins', 'system:nodes', 'system:masters'],
  }),
  scc('restricted', {
    description: 'restricted denies access to all host features and requires pods to be run with a UID, and SELinux context that are allocated to the namespace.',
    requiredDrop: V1Drops, runAsUser: 'MustRunAsRange', seLinux: 'MustRunAs', fsGroup: 'MustRunAs', supplementalGroups: 'RunAsAny',
  }),
  scc('restricted-v2', {
    description: 'restricted-v2 denies access to all host features and requires pods to be run with a UID, and SELinux context that are allocated to the namespace. This is the most restrictive SCC and it is used by default for authenticated users. On top of the legacy \'restricted\' SCC, it also requires to drop ALL capabilities and does not allow privilege escalation binaries. It will also default the seccomp profile to runtime/default if unset, otherwise this seccomp profile is required.',
    v2: true, runAsUser: 'MustRunAsRange', seLinux: 'MustRunAs', fsGroup: 'MustRunAs', supplementalGroups: 'RunAsAny',
  }),
];

export const DefaultSccNames = DefaultSccs.map((s) => s.metadata.name!);
