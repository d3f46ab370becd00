/**
 * The parts of core/v1 the node agent reads and writes: kube-client's typed core/v1 objects (one
 * home for every client of the API), and the kubelet's ways of naming a pod and a time.
 */
import type { ObjectMeta, Pod } from '@func/kube-client';

export type { KeySelector, EnvVarSource, EnvVar, EnvFromSource, HttpGetAction, ProbeHandler, Probe, VolumeMount, Container, SecurityContext, PodSecurityContext, Toleration, Volume, PodSpec, Condition, ContainerState, ContainerStatus, PodStatus, Pod, Taint, Node } from '@func/kube-client';

/** kube-client's object metadata (with the field a pod's deletion adds). */
export type Meta = ObjectMeta;

/** `name_namespace(uid)`: how the kubelet names a pod in messages (format.Pod). */
export const podDesc = (pod: Pod): string => `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})`;

/** A Go time.Time as RFC 3339 with whole seconds, as metav1.Time serialises. */
export const rfc3339 = (ms = Date.now()): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
