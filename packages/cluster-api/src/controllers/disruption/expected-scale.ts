/**
 * getExpectedScale: the pods a budget expects when it counts in percentages or maxUnavailable, the
 * sum of the scales of the controllers of its selected pods, each controller once. The finders run
 * in the disruption controller's order: a ReplicaSet not owned by a Deployment, the Deployment of a
 * pod's ReplicaSet, a ReplicationController, a StatefulSet (their `spec.replicas` from the shared
 * caches), then any other kind through its `scale` subresource. A pod without controller is
 * unmanaged (reported, not counted); one whose controller none finds fails the sync.
 */
import type { KubeObject, OwnerReference } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import { num, spec } from '../../registry/kinds/common.js';
import type { ObjectCache } from '../cache.js';
import { served, type ControllerContext } from '../context.js';
import { resolveOwner } from '../owners.js';
import { inNamespace } from '../shared.js';

interface Scale {
  uid: string;
  scale: number;
}

const controllerOf = (o: KubeObject): OwnerReference | undefined => o.metadata.ownerReferences?.find((r) => r.controller === true);
const groupOf = (apiVersion: string): string => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');
const replicas = (o: KubeObject): Scale => ({ uid: o.metadata.uid!, scale: num(spec(o).replicas) });

/** The caches the finders read and the client the last one asks. */
export class ScaleSources {
  private readonly kinds: Record<'ReplicaSet' | 'Deployment' | 'ReplicationController' | 'StatefulSet', ObjectCache | undefined>;

  constructor(private readonly ctx: ControllerContext) {
    this.kinds = {
      ReplicaSet: served(ctx, 'apps', 'v1', 'replicasets')?.cache,
      Deployment: served(ctx, 'apps', 'v1', 'deployments')?.cache,
      ReplicationController: served(ctx, '', 'v1', 'replicationcontrollers')?.cache,
      StatefulSet: served(ctx, 'apps', 'v1', 'statefulsets')?.cache,
    };
  }

  caches(): ObjectCache[] {
    return Object.values(this.kinds).filter((c): c is ObjectCache => c !== undefined);
  }

  private owner(ref: OwnerReference | undefined, namespace: string | undefined, group: string, kind: keyof ScaleSources['kinds']): KubeObject | undefined {
    const cache = this.kinds[kind];
    return cache && resolveOwner(ref, namespace, { group, kind }, cache);
  }

  /** The finders, in order; the first that knows the controller answers. */
  async find(ref: OwnerReference, namespace: string | undefined): Promise<Scale | undefined> {
    const rs = this.owner(ref, namespace, 'apps', 'ReplicaSet');
    if (rs) {
      const rsRef = controllerOf(rs);
      if (rsRef?.kind !== 'Deployment') return replicas(rs);
      const deployment = this.owner(rsRef, namespace, 'apps', 'Deployment');
      if (deployment) return replicas(deployment);
    }
    const rc = this.owner(ref, namespace, '', 'ReplicationController') ?? this.owner(ref, namespace, 'apps', 'StatefulSet');
    if (rc) return replicas(rc);
    return this.scaleOf(ref, namespace);
  }

  /** getScaleController: any kind served with a scale subresource. */
  private async scaleOf(ref: OwnerReference, namespace: string | undefined): Promise<Scale | undefined> {
    const group = groupOf(ref.apiVersion);
    const def = this.ctx.client.definitions().find((d) => d.group === group && d.kind === ref.kind && !d.plural.includes('/') && !d.storedAs);
    const store = def && this.ctx.client.find(def.group, def.version, def.plural);
    if (!store) return undefined;
    try {
      const scale = await store.get(inNamespace(namespace), ref.name, 'scale');
      if (scale.metadata.uid !== ref.uid) return undefined;
      return { uid: ref.uid, scale: num(spec(scale).replicas) };
    } catch (err) {
      if (isApiError(err) && (err.code === 404 || err.code === 405)) return undefined;
      throw err;
    }
  }
}

export const expectedScale = async (pods: KubeObject[], sources: ScaleSources): Promise<{ expectedCount: number; unmanaged: string[] }> => {
  // Keyed by the controller found: a Deployment reached through several ReplicaSets counts once.
  const scales = new Map<string, number>();
  const asked = new Set<string>();
  const unmanaged: string[] = [];
  for (const pod of pods) {
    const ref = controllerOf(pod);
    if (!ref) {
      unmanaged.push(pod.metadata.name ?? '');
      continue;
    }
    if (asked.has(ref.uid)) continue;
    asked.add(ref.uid);
    const found = await sources.find(ref, pod.metadata.namespace);
    if (!found) throw new Error(`found no controllers for pod "${pod.metadata.name ?? ''}"`);
    scales.set(found.uid, found.scale);
  }
  return { expectedCount: [...scales.values()].reduce((a, b) => a + b, 0), unmanaged };
};
