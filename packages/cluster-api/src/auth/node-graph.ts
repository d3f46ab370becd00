/**
 * What each node may read, as kube-apiserver's Node authorizer keeps it (its graph): the pods bound to
 * a node, and for each pod the Secrets, ConfigMaps, ServiceAccount and PersistentVolumeClaims it
 * references (registry/kinds/pod-references.ts: podutil's VisitPodSecretNames / VisitPodConfigmapNames).
 * Kept in memory from a watch of every pod, so the authorizer decides synchronously.
 */
import type { KubeObject } from '../api/meta.js';
import type { Registry } from '../registry/rest.js';
import { specReferences, type Referenced } from '../registry/kinds/pod-references.js';

export type Related = Exclude<Referenced, 'clustertrustbundle'>;

interface PodEdges {
  node: string;
  refs: Set<string>;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** `kind/name` of everything a pod spec references, with what its ServiceAccount brings implicitly. */
export function podReferences(spec: Obj): Set<string> {
  const refs = specReferences(spec);
  refs.add(`serviceaccount/${str(spec.serviceAccountName) || 'default'}`);
  // The ServiceAccount admission plugin's kube-api-access volume (token + kube-root-ca.crt), which
  // this server's node agent adds itself instead of writing it into the stored spec.
  if (spec.automountServiceAccountToken !== false) refs.add('configmap/kube-root-ca.crt');
  return refs;
}

export class NodeGraph {
  private readonly pods = new Map<string, PodEdges>();
  private watch?: { close(): void };
  private stopped = false;

  /** A pod was seen (or changed): it and its references belong to its node, if it has one. */
  observe(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: KubeObject): void {
    const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
    const node = str(obj(pod.spec).nodeName);
    if (type === 'DELETED' || !node) return void this.pods.delete(key);
    this.pods.set(key, { node, refs: podReferences(obj(pod.spec)) });
  }

  /** The node a pod is bound to. */
  podNode(namespace: string, name: string): string | undefined {
    return this.pods.get(`${namespace}/${name}`)?.node;
  }

  /** Whether a pod bound to `node` in `namespace` references `kind/name`. */
  relates(node: string, kind: Related, namespace: string, name: string): boolean {
    const ref = `${kind}/${name}`;
    for (const [key, edges] of this.pods) if (edges.node === node && key.startsWith(`${namespace}/`) && edges.refs.has(ref)) return true;
    return false;
  }

  /** Follows every pod through the registry until stop(), re-watching after an error. */
  start(registry: Registry): this {
    const pods = registry.find('', 'v1', 'pods');
    const follow = (): void => {
      if (this.stopped || !pods) return;
      this.pods.clear();
      pods.watch({}, {}, {
        onEvent: (e) => {
          if (e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED') this.observe(e.type, e.object);
        },
        onError: () => setTimeout(follow, 1000).unref(),
      }).then((h) => (this.stopped ? h.close() : (this.watch = h)), () => setTimeout(follow, 1000).unref());
    };
    follow();
    return this;
  }

  stop(): void {
    this.stopped = true;
    this.watch?.close();
  }
}
