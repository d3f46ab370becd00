/**
 * The parts of core/v1 the node agent reads and writes, named as Kubernetes names them. Everything is
 * optional on the wire; the agent treats a missing field as Kubernetes' default.
 */
import type { ObjectMeta } from '@func/kube-client';

/** kube-client's object metadata, with the field a pod's deletion adds. */
export interface Meta extends ObjectMeta {
  deletionGracePeriodSeconds?: number;
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
  /** A stdin kept open for attach; `stdinOnce`: closed when the first attached client's input ends. */
  stdin?: boolean;
  stdinOnce?: boolean;
  tty?: boolean;
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
  metadata: Meta;
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
  metadata: Meta;
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

/** `name_namespace(uid)`: how the kubelet names a pod in messages (format.Pod). */
export const podDesc = (pod: Pod): string => `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;

/** A Go time.Time as RFC 3339 with whole seconds, as metav1.Time serialises. */
export const rfc3339 = (ms = Date.now()): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
