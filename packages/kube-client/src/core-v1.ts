/**
 * core/v1 objects, typed as the API has them (k8s.io/api/core/v1), for every client of the API
 * here: the node agent, the scheduler, the controllers, `func-runtime deploy`. Everything is
 * optional on the wire but what Kubernetes requires; a reader treats a missing field as
 * Kubernetes' default. Only the fields some client reads or writes are named; the rest pass
 * through the index signatures.
 */
import type { ObjectMeta } from './types.js';

/** core/v1 ObjectReference: what an event or a binding is about (a container of a pod by `fieldPath`). */
export interface ObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  fieldPath?: string;
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

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}

export interface EnvVarSource {
  fieldRef?: { fieldPath: string; apiVersion?: string };
  resourceFieldRef?: { resource: string; containerName?: string; divisor?: string | number };
  configMapKeyRef?: KeySelector;
  secretKeyRef?: KeySelector;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface HttpGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: 'HTTP' | 'HTTPS';
  httpHeaders?: { name: string; value: string }[];
}

export interface ProbeHandler {
  httpGet?: HttpGetAction;
  tcpSocket?: { port: number | string; host?: string };
  exec?: { command?: string[] };
  grpc?: { port: number; service?: string };
}

export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  readOnly?: boolean;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: { containerPort: number; name?: string; protocol?: string; hostPort?: number }[];
  resources?: { limits?: Record<string, string | number>; requests?: Record<string, string | number> };
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: ProbeHandler & { sleep?: { seconds: number } }; postStart?: ProbeHandler };
  imagePullPolicy?: 'Always' | 'IfNotPresent' | 'Never';
  terminationMessagePolicy?: 'File' | 'FallbackToLogsOnError';
  restartPolicy?: string;
  securityContext?: SecurityContext;
  /** A stdin kept open for attach; `stdinOnce`: closed when the first attached client's input ends. */
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
}

/** A container's securityContext (its run-as fields win over the pod's). */
export interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  runAsNonRoot?: boolean;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  privileged?: boolean;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type?: string; localhostProfile?: string };
}

export interface PodSecurityContext extends Pick<SecurityContext, 'runAsUser' | 'runAsGroup' | 'runAsNonRoot' | 'seccompProfile'> {
  fsGroup?: number;
  supplementalGroups?: number[];
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  /** Added through pods/ephemeralcontainers (kubectl debug); never restarted. */
  ephemeralContainers?: (Container & { targetContainerName?: string })[];
  volumes?: Volume[];
  nodeName?: string;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  terminationGracePeriodSeconds?: number;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  securityContext?: PodSecurityContext;
  tolerations?: Toleration[];
  nodeSelector?: Record<string, string>;
  affinity?: Record<string, unknown>;
  readinessGates?: { conditionType: string }[];
  schedulerName?: string;
  priority?: number;
  [key: string]: unknown;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { exitCode: number; signal?: number; reason?: string; message?: string; startedAt?: string; finishedAt?: string; containerID?: string };
}

export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; recursiveReadOnly?: string }[];
}

export interface PodStatus {
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  conditions?: Condition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
  qosClass?: string;
  [key: string]: unknown;
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
  [key: string]: unknown;
}

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  timeAdded?: string;
}

export interface Node {
  [key: string]: unknown;
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { podCIDR?: string; podCIDRs?: string[]; taints?: Taint[]; unschedulable?: boolean; [key: string]: unknown };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: Condition[];
    addresses?: { type: string; address: string }[];
    daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
    nodeInfo?: Record<string, string>;
    [key: string]: unknown;
  };
}

export interface ServicePort {
  name?: string;
  nodePort?: number;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
  targetPort?: number | string;
}

export interface Service {
  [key: string]: unknown;
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    type?: 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';
    clusterIP?: string;
    clusterIPs?: string[];
    externalIPs?: string[];
    externalName?: string;
    externalTrafficPolicy?: string;
    ports?: ServicePort[];
    selector?: Record<string, string>;
    sessionAffinity?: string;
    [key: string]: unknown;
  };
  status?: { loadBalancer?: { ingress?: { hostname?: string; ip?: string }[] }; [key: string]: unknown };
}
