/**
 * core/v1 wire types of the spec's kinds (k8s.io/api/core/v1 and OpenShift's SecurityContextConstraints),
 * as clients send and receive them. Every field is optional on the wire; the registry's strategies
 * validate what is required. Field names follow Kubernetes exactly so JSON round-trips.
 */
import type { KubeObject, ObjectMeta } from './meta.js';

export type Quantity = string | number;
export type ResourceList = Record<string, Quantity>;

export interface ObjectReference {
  apiVersion?: string;
  fieldPath?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
}

export interface LocalObjectReference {
  name?: string;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchExpressions?: LabelSelectorRequirement[];
  matchLabels?: Record<string, string>;
}

interface Typed<K extends string> extends KubeObject {
  apiVersion: 'v1';
  kind: K;
  metadata: ObjectMeta;
}

/* ---- Pods ---- */

export interface ContainerPort {
  containerPort: number;
  hostIP?: string;
  hostPort?: number;
  name?: string;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface VolumeMount {
  mountPath: string;
  name: string;
  readOnly?: boolean;
  subPath?: string;
}

export interface Container {
  name: string;
  image?: string;
  args?: string[];
  command?: string[];
  env?: EnvVar[];
  envFrom?: Record<string, unknown>[];
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  lifecycle?: Record<string, unknown>;
  livenessProbe?: Record<string, unknown>;
  readinessProbe?: Record<string, unknown>;
  ports?: ContainerPort[];
  resources?: { limits?: ResourceList; requests?: ResourceList };
  securityContext?: Record<string, unknown>;
  stdin?: boolean;
  stdinOnce?: boolean;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  tty?: boolean;
  volumeMounts?: VolumeMount[];
  workingDir?: string;
}

export interface Toleration {
  effect?: string;
  key?: string;
  operator?: string;
  tolerationSeconds?: number;
  value?: string;
}

/** A volume: `name` plus exactly one source (configMap, secret, emptyDir, persistentVolumeClaim, …). */
export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface PodSpec {
  activeDeadlineSeconds?: number;
  affinity?: Record<string, unknown>;
  automountServiceAccountToken?: boolean;
  containers: Container[];
  dnsPolicy?: 'ClusterFirst' | 'ClusterFirstWithHostNet' | 'Default' | 'None';
  hostAliases?: { hostnames?: string[]; ip?: string }[];
  hostIPC?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostname?: string;
  imagePullSecrets?: LocalObjectReference[];
  initContainers?: Container[];
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  schedulerName?: string;
  securityContext?: Record<string, unknown>;
  serviceAccount?: string;
  serviceAccountName?: string;
  subdomain?: string;
  terminationGracePeriodSeconds?: number;
  tolerations?: Toleration[];
  volumes?: Volume[];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastProbeTime?: string;
  lastTransitionTime?: string;
  message?: string;
  reason?: string;
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  image?: string;
  imageID?: string;
  containerID?: string;
  state?: Record<string, unknown>;
  lastState?: Record<string, unknown>;
}

export interface PodStatus {
  conditions?: Condition[];
  containerStatuses?: ContainerStatus[];
  hostIP?: string;
  initContainerStatuses?: ContainerStatus[];
  message?: string;
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  podIP?: string;
  qosClass?: string;
  reason?: string;
  startTime?: string;
}

export interface Pod extends Typed<'Pod'> {
  spec: PodSpec;
  status?: PodStatus;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec: PodSpec;
}

export interface PodTemplate extends Typed<'PodTemplate'> {
  template: PodTemplateSpec;
}

export interface ReplicationController extends Typed<'ReplicationController'> {
  spec: { minReadySeconds?: number; replicas?: number; selector?: Record<string, string>; template?: PodTemplateSpec };
  status?: {
    availableReplicas?: number;
    conditions?: Condition[];
    fullyLabeledReplicas?: number;
    observedGeneration?: number;
    readyReplicas?: number;
    replicas: number;
  };
}

/* ---- Services, namespaces, accounts, secrets ---- */

export interface ServicePort {
  name?: string;
  nodePort?: number;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  targetPort?: number | string;
}

export interface Service extends Typed<'Service'> {
  spec: {
    clusterIP?: string;
    externalIPs?: string[];
    externalName?: string;
    externalTrafficPolicy?: string;
    healthCheckNodePort?: number;
    loadBalancerIP?: string;
    loadBalancerSourceRanges?: string[];
    ports?: ServicePort[];
    selector?: Record<string, string>;
    sessionAffinity?: string;
    type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
  };
  status?: { loadBalancer?: { ingress?: { hostname?: string; ip?: string }[] } };
}

export interface Namespace extends Typed<'Namespace'> {
  spec?: { finalizers?: string[] };
  status?: { phase?: 'Active' | 'Terminating' };
}

export interface ServiceAccount extends Typed<'ServiceAccount'> {
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: LocalObjectReference[];
  secrets?: ObjectReference[];
}

export interface Secret extends Typed<'Secret'> {
  /** base64-encoded values; at most 1 MiB in total. */
  data?: Record<string, string>;
  /** Write-only plain values, merged into `data` on write. */
  stringData?: Record<string, string>;
  type?: string;
  immutable?: boolean;
}

/* ---- Quotas and storage ---- */

export interface LimitRange extends Typed<'LimitRange'> {
  spec: {
    limits: {
      type: 'Container' | 'Pod' | 'PersistentVolumeClaim';
      default?: ResourceList;
      defaultRequest?: ResourceList;
      max?: ResourceList;
      maxLimitRequestRatio?: ResourceList;
      min?: ResourceList;
    }[];
  };
}

export interface ResourceQuota extends Typed<'ResourceQuota'> {
  spec: { hard?: ResourceList; scopes?: string[] };
  status?: { hard?: ResourceList; used?: ResourceList };
}

export interface PersistentVolumeClaim extends Typed<'PersistentVolumeClaim'> {
  spec: {
    accessModes: string[];
    resources: { limits?: ResourceList; requests: ResourceList };
    selector?: LabelSelector;
    storageClassName?: string;
    volumeName?: string;
  };
  status?: { accessModes?: string[]; capacity?: ResourceList; phase?: 'Pending' | 'Bound' | 'Lost' };
}

export interface PersistentVolume extends Typed<'PersistentVolume'> {
  /** accessModes, capacity, claimRef, persistentVolumeReclaimPolicy, storageClassName and one volume source. */
  spec: {
    accessModes: string[];
    capacity: ResourceList;
    claimRef?: ObjectReference;
    persistentVolumeReclaimPolicy?: 'Retain' | 'Recycle' | 'Delete';
    storageClassName?: string;
    [source: string]: unknown;
  };
  status?: { message?: string; phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed'; reason?: string };
}

/* ---- Security and health ---- */

export interface SecurityContextConstraints extends Typed<'SecurityContextConstraints'> {
  allowHostDirVolumePlugin?: boolean;
  allowHostIPC?: boolean;
  allowHostNetwork?: boolean;
  allowHostPID?: boolean;
  allowHostPorts?: boolean;
  allowPrivilegedContainer?: boolean;
  allowedCapabilities?: string[];
  defaultAddCapabilities?: string[];
  fsGroup?: { ranges?: { max?: number; min?: number }[]; type?: string };
  groups?: string[];
  priority?: number;
  readOnlyRootFilesystem?: boolean;
  requiredDropCapabilities?: string[];
  runAsUser: { type: string; uid?: number; uidRangeMax?: number; uidRangeMin?: number };
  seLinuxContext: { seLinuxOptions?: Record<string, string>; type: string };
  seccompProfiles?: string[];
  supplementalGroups?: { ranges?: { max?: number; min?: number }[]; type?: string };
  users?: string[];
  volumes?: string[];
}

export interface ComponentStatus extends Typed<'ComponentStatus'> {
  conditions: { type: 'Healthy'; status: 'True' | 'False' | 'Unknown'; message?: string; error?: string }[];
}
