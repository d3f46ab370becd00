/**
 * Where a process finds its `volumeMounts`. A process shares the node's filesystem, so each
 * container gets a mount root, `<pod dir>/root/<container>`, in which every `mountPath` is a symlink
 * to its volume (or to `subPath` inside it): `/etc/config` is `$FUNC_MOUNT_ROOT/etc/config`. The
 * container learns the root from `FUNC_MOUNT_ROOT`, and env values and arguments that name a path
 * under a mountPath are rewritten to the same path under the root, so `CONFIG=/etc/config/app.yaml`
 * just works. The service account token is mounted as Kubernetes' ServiceAccount admission mounts it
 * (`/var/run/secrets/kubernetes.io/serviceaccount`: token, ca.crt, namespace) unless the pod or a
 * container already mounts something there or opts out with automountServiceAccountToken: false.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
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

export interface MountRoot {
  root: string;
  /** A path as the container would name it → where it is on the node (unchanged when under no mount). */
  hostPath(path: string): string;
}

/** Builds the container's mount root from scratch (a restart sees the same links). */
export function mountRoot(dir: string, mounts: readonly VolumeMount[], volumes: ReadonlyMap<string, string>): MountRoot {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const paths: string[] = [];
  for (const m of mounts) {
    const mountPath = normalize(m.mountPath);
    if (!isAbsolute(mountPath) || mountPath.split(sep).includes('..')) throw new VolumeError(m.name, `mountPath ${JSON.stringify(m.mountPath)} must be absolute without '..'`);
    const volume = volumes.get(m.name);
    if (volume === undefined) throw new VolumeError(m.name, `volume "${m.name}" is not defined in the pod`);
    let target = volume;
    if (m.subPath) {
      const sub = normalize(m.subPath);
      if (isAbsolute(sub) || sub === '..' || sub.startsWith(`..${sep}`)) throw new VolumeError(m.name, `subPath ${JSON.stringify(m.subPath)} must be relative without '..'`);
      target = join(volume, sub);
      mkdirSync(target, { recursive: true });
    }
    const link = join(dir, mountPath);
    mkdirSync(dirname(link), { recursive: true });
    rmSync(link, { recursive: true, force: true });
    symlinkSync(target, link);
    paths.push(mountPath);
  }
  const under = (p: string) => paths.some((m) => p === m || p.startsWith(m.endsWith('/') ? m : `${m}/`));
  return { root: dir, hostPath: (p) => (isAbsolute(p) && under(normalize(p)) ? join(dir, p) : p) };
}
