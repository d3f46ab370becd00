/**
 * What each node may read, as kube-apiserver's Node authorizer keeps it (its graph): the pods bound to
 * a node, and for each pod the Secrets, ConfigMaps, ServiceAccount and PersistentVolumeClaims it
 * references (registry/kinds/pod-references.ts: podutil's VisitPodSecretNames / VisitPodConfigmapNames).
 * Kept in memory from a watch of every pod, so the authorizer decides synchronously. Each edge
 * (node, namespace, referenced object) carries the number of pods that make it, so a node's read is
 * one lookup whatever the number of pods, and the edge goes when its last pod does.
 */
import type { KubeObject } from '../api/meta.js';
import type { Registry } from '../registry/rest.js';
import { obj, str, type Obj } from '../registry/kinds/common.js';
import { specReferences, type Referenced } from '../registry/kinds/pod-references.js';

export type Related = Exclude<Referenced, 'clustertrustbundle'>;

interface PodEdges {
  node: string;
  namespace: string;
  refs: Set<string>;
}

/** `kind/name` of everything a pod spec references, with what its ServiceAccount brings implicitly. */
export function podReferences(spec: Obj): Set<string> {
  const refs = specReferences(spec);
  refs.add(`serviceaccount/${str(spec.serviceAccountName) || 'default'}`);
  // The ServiceAccount admission plugin's kube-api-access volume (token + kube-root-ca.crt), which
  // this server's node agent adds itself instead of writing it into the stored spec.
  if (spec.automountServiceAccountToken !== false) refs.add('configmap/kube-root-ca.crt');
  return refs;
}

/** An edge's key: names cannot hold a NUL, so the parts cannot run into each other. */
const edgeKey = (node: string, namespace: string, ref: string): string => `${node}\0${namespace}\0${ref}`;

export class NodeGraph {
  private readonly pods = new Map<string, PodEdges>();
  /** edgeKey → how many pods make the edge. */
  private readonly edges = new Map<string, number>();
  private watch?: { close(): void };
  private stopped = false;

  /** A pod was seen (or changed): it and its references belong to its node, if it has one. */
  observe(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: KubeObject): void {
    const namespace = pod.metadata.namespace ?? '';
    const key = `${namespace}/${pod.metadata.name ?? ''}`;
    const before = this.pods.get(key);
    if (before) this.count(before, -1);
    const node = str(obj(pod.spec).nodeName);
    if (type === 'DELETED' || !node) return void this.pods.delete(key);
    const now = { node, namespace, refs: podReferences(obj(pod.spec)) };
    this.pods.set(key, now);
    this.count(now, 1);
  }

  private count(pod: PodEdges, by: 1 | -1): void {
    for (const ref of pod.refs) {
      const key = edgeKey(pod.node, pod.namespace, ref);
      const n = (this.edges.get(key) ?? 0) + by;
      if (n > 0) this.edges.set(key, n);
      else this.edges.delete(key);
    }
  }

  /** The node a pod is bound to. */
  podNode(namespace: string, name: string): string | undefined {
    return this.pods.get(`${namespace}/${name}`)?.node;
  }

  /** Whether a pod bound to `node` in `namespace` references `kind/name`. */
  relates(node: string, kind: Related, namespace: string, name: string): boolean {
    return this.edges.has(edgeKey(node, namespace, `${kind}/${name}`));
  }

  /** Follows every pod through the registry until stop(), re-watching after an error. */
  start(registry: Registry): this {
    const pods = registry.find('', 'v1', 'pods');
    const follow = (): void => {
      if (this.stopped || !pods) return;
      this.pods.clear();
      this.edges.clear();
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
