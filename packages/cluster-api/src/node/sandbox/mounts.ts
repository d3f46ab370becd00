/**
 * A container's `volumeMounts` as the runtime is given them (CRI mounts: the path inside, the
 * volume's path on the node, subPath resolved), checked as the kubelet's makeMounts checks them.
 * The service account token is mounted as Kubernetes' ServiceAccount admission mounts it
 * (`/var/run/secrets/kubernetes.io/serviceaccount`: token, ca.crt, namespace) unless the pod or a
 * container already mounts something there or opts out with automountServiceAccountToken: false.
 */
import { mkdirSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import type { Mount } from '../runtime/cri.js';
import { VolumeError } from './volumes.js';
import type { Container, Pod, Volume, VolumeMount } from '../types.js';

export const ServiceAccountMountPath = '/var/run/secrets/kubernetes.io/serviceaccount';
export const ServiceAccountVolume = 'kube-api-access';

/** The projected volume the ServiceAccount admission plugin adds (token 3607 s, CA, namespace). */
export const serviceAccountVolume = (): Volume => ({
  name: ServiceAccountVolume,
  projected: {
    defaultMode: 0o644,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      // Optional here: a server without TLS has no CA to publish.
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }], optional: true } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
});

const mountsAt = (c: Container, path: string) => (c.volumeMounts ?? []).some((m) => normalize(m.mountPath) === path);

/** The pod's volumes and each container's mounts, with the service account volume when it is wanted. */
export function withServiceAccount(pod: Pod): { volumes: Volume[]; mounts: (c: Container) => VolumeMount[] } {
  const volumes = [...(pod.spec.volumes ?? [])];
  const wanted = pod.spec.automountServiceAccountToken !== false && !volumes.some((v) => v.name.startsWith(`${ServiceAccountVolume}-`) || v.name === ServiceAccountVolume);
  if (wanted) volumes.push(serviceAccountVolume());
  const mounts = (c: Container): VolumeMount[] => {
    const own = c.volumeMounts ?? [];
    return wanted && !mountsAt(c, ServiceAccountMountPath) ? [...own, { name: ServiceAccountVolume, mountPath: ServiceAccountMountPath, readOnly: true }] : own;
  };
  return { volumes, mounts };
}

/** The CRI mounts of a container: each mountPath absolute without '..', its volume defined, subPath inside it (made when missing). */
export function containerMounts(mounts: readonly VolumeMount[], volumes: ReadonlyMap<string, string>): Mount[] {
  return mounts.map((m) => {
    const mountPath = normalize(m.mountPath);
    if (!isAbsolute(mountPath) || mountPath.split(sep).includes('..')) throw new VolumeError(m.name, `mountPath ${JSON.stringify(m.mountPath)} must be absolute without '..'`);
    const volume = volumes.get(m.name);
    if (volume === undefined) throw new VolumeError(m.name, `volume "${m.name}" is not defined in the pod`);
    let hostPath = volume;
    if (m.subPath) {
      const sub = normalize(m.subPath);
      if (isAbsolute(sub) || sub === '..' || sub.startsWith(`..${sep}`)) throw new VolumeError(m.name, `subPath ${JSON.stringify(m.subPath)} must be relative without '..'`);
      hostPath = join(volume, sub);
      mkdirSync(hostPath, { recursive: true });
    }
    return { name: m.name, containerPath: mountPath, hostPath, readonly: m.readOnly ?? false };
  });
}
