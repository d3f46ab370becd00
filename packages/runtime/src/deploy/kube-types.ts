/**
 * The Kubernetes shapes deploy writes and reads (apps/v1 Deployment, v1 Service and Pod, Knative's
 * Service and Trigger), only the fields it touches; names and nesting as the API has them. The
 * core/v1 pieces (containers, env, volumes, conditions, container statuses) are kube-client's typed
 * core/v1 objects; Knative's container relaxes the probe port.
 */
import type { Condition, Container as CoreContainer, ContainerStatus, HttpGetAction, ObjectMeta as KubeObjectMeta, OwnerReference, Probe as CoreProbe, Volume } from '@func/kube-client';

export type { Condition, ContainerState, ContainerStatus, EnvFromSource, EnvVar, Volume, VolumeMount } from '@func/kube-client';

/** A Knative Service's probe: core/v1's, whose httpGet may leave the port to the container's serving port. */
export type Probe = Omit<CoreProbe, 'httpGet'> & { httpGet?: Omit<HttpGetAction, 'port'> & { port?: number | string } };

/** A Knative Service's container: core/v1's, with Knative's probes. */
export type Container = Omit<CoreContainer, 'livenessProbe' | 'readinessProbe'> & { livenessProbe?: Probe; readinessProbe?: Probe };

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

export interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  serviceAccountName?: string;
  containerConcurrency?: number;
  nodeName?: string;
}

export interface Deployment extends Manifest {
  spec: {
    /** Absent when a HorizontalPodAutoscaler keeps the count (a re-deploy then leaves it alone). */
    replicas?: number;
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

export interface Pod extends Manifest {
  spec: PodSpec;
  status?: { phase?: string; podIP?: string; conditions?: Condition[]; containerStatuses?: ContainerStatus[]; reason?: string; message?: string };
}

export interface Service extends Manifest {
  spec: { type?: string; clusterIP?: string; selector?: Record<string, string>; ports: { name?: string; port: number; targetPort?: number; protocol?: string; nodePort?: number }[] };
  status?: { url?: string; conditions?: Condition[]; observedGeneration?: number; latestReadyRevisionName?: string; latestCreatedRevisionName?: string; traffic?: TrafficTarget[] };
}

/** A Knative Route's (and Service's) traffic target, in spec and status. */
export interface TrafficTarget {
  revisionName?: string;
  configurationName?: string;
  latestRevision?: boolean;
  percent?: number;
  tag?: string;
  url?: string;
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
