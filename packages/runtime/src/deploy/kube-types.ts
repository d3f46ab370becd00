/**
 * The Kubernetes shapes deploy writes and reads (apps/v1 Deployment, v1 Service and Pod, Knative's
 * Service and Trigger), only the fields it touches; names and nesting as the API has them.
 */
import type { ObjectMeta as KubeObjectMeta, OwnerReference } from '@func/kube-client';

export type { OwnerReference };

/** kube-client's metadata, with the name every object here has. */
export interface ObjectMeta extends KubeObjectMeta {
  name: string;
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string }; configMapKeyRef?: { name: string; key: string } };
}

export interface EnvFromSource {
  secretRef?: { name: string };
  configMapRef?: { name: string };
}

export interface Volume {
  name: string;
  secret?: { secretName: string };
  configMap?: { name: string };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
  emptyDir?: { medium?: string; sizeLimit?: string };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
}

export interface Probe {
  httpGet: { path: string; port?: number };
  periodSeconds?: number;
}

export interface Container {
  name: string;
  image: string;
  ports?: { containerPort: number; protocol: string; name?: string }[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
}

export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  serviceAccountName?: string;
  containerConcurrency?: number;
  nodeName?: string;
}

export interface Deployment extends Manifest {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
    conditions?: Condition[];
  };
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { exitCode: number; reason?: string; message?: string };
}

export interface ContainerStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID?: string;
  state?: ContainerState;
  lastState?: ContainerState;
}

export interface Pod extends Manifest {
  spec: PodSpec;
  status?: { phase?: string; podIP?: string; conditions?: Condition[]; containerStatuses?: ContainerStatus[]; reason?: string; message?: string };
}

export interface Service extends Manifest {
  spec: { type?: string; clusterIP?: string; selector?: Record<string, string>; ports: { name?: string; port: number; targetPort?: number; protocol?: string; nodePort?: number }[] };
  status?: { url?: string; conditions?: Condition[]; latestReadyRevisionName?: string };
}

export interface KubeEvent extends Manifest {
  involvedObject: { kind?: string; name?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { lastObservedTime?: string };
}
