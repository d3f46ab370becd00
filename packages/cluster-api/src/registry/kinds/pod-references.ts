/**
 * The API objects a pod spec names (podutil's VisitPodSecretNames and VisitPodConfigmapNames over
 * every container kind, plus its ServiceAccount, PersistentVolumeClaims and ClusterTrustBundles):
 * what the Node authorizer's graph lets a node read, and what NodeRestriction refuses in a mirror pod.
 */
import { arr, obj, str, type Obj } from './common.js';

export type Referenced = 'secret' | 'configmap' | 'serviceaccount' | 'pvc' | 'clustertrustbundle';

/** Volume sources that name a Secret: the field path under the source (VisitPodSecretNames' list). */
const VolumeSecrets: readonly (readonly [string, ...string[]])[] = [
  ['secret', 'secretName'],
  ['azureFile', 'secretName'],
  ['cephfs', 'secretRef', 'name'],
  ['cinder', 'secretRef', 'name'],
  ['flexVolume', 'secretRef', 'name'],
  ['rbd', 'secretRef', 'name'],
  ['scaleIO', 'secretRef', 'name'],
  ['iscsi', 'secretRef', 'name'],
  ['storageos', 'secretRef', 'name'],
  ['csi', 'nodePublishSecretRef', 'name'],
];

const at = (o: Obj, path: readonly string[]): unknown => path.reduce<unknown>((v, f) => obj(v)[f], o);

/** `kind/name` of every object the spec names itself; the ServiceAccount only when the spec names one. */
export function specReferences(spec: Obj): Set<string> {
  const refs = new Set<string>();
  const add = (kind: Referenced, name: unknown) => void (str(name) && refs.add(`${kind}/${str(name)}`));
  add('serviceaccount', spec.serviceAccountName);
  for (const s of arr(spec.imagePullSecrets)) add('secret', obj(s).name);
  for (const v of arr(spec.volumes).map(obj)) {
    for (const path of VolumeSecrets) add('secret', at(v, path));
    add('configmap', obj(v.configMap).name);
    add('pvc', obj(v.persistentVolumeClaim).claimName);
    for (const src of arr(obj(v.projected).sources).map(obj)) {
      add('secret', obj(src.secret).name);
      add('configmap', obj(src.configMap).name);
      add('clustertrustbundle', obj(src.clusterTrustBundle).name || obj(src.clusterTrustBundle).signerName);
    }
  }
  for (const c of [...arr(spec.containers), ...arr(spec.initContainers), ...arr(spec.ephemeralContainers)].map(obj)) {
    for (const e of arr(c.env).map(obj)) {
      add('secret', obj(obj(e.valueFrom).secretKeyRef).name);
      add('configmap', obj(obj(e.valueFrom).configMapKeyRef).name);
    }
    for (const f of arr(c.envFrom).map(obj)) {
      add('secret', obj(f.secretRef).name);
      add('configmap', obj(f.configMapRef).name);
    }
  }
  return refs;
}

/** Whether `refs` holds an object of `kind`. */
export const refersTo = (refs: Set<string>, kind: Referenced): boolean => [...refs].some((r) => r.startsWith(`${kind}/`));
