/**
 * The scale subresource: an autoscaling/v1 Scale (or a beta group's own) view of an object's replica count, as Kubernetes'
 * ScaleREST serves it for ReplicationControllers. `kubectl scale` and autoscalers read and write it
 * without touching (or even knowing) the rest of the object. A write sets spec.replicas through the
 * kind's own update rules (generation, validation, resourceVersion precondition).
 */
import type { KubeObject } from '../../api/meta.js';
import { badRequest, invalid } from '../../api/errors.js';
import { clone, isObject } from '../generic/meta.js';
import type { SubresourceDef } from '../subresource.js';

const obj = (v: unknown): Record<string, unknown> => (isObject(v) ? v : {});
const count = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** labels.SelectorFromSet(...).String(): `k=v` pairs sorted by key, comma-separated. */
export const selectorString = (set: unknown): string =>
  Object.entries(obj(set))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');

/**
 * Where a kind keeps its replica counts, as a CRD's scale subresource names them (`.spec.replicas`):
 * the desired count (read and written through the Scale) and the observed one.
 */
export interface ReplicaPaths {
  spec: string;
  status: string;
}

const DefaultPaths: ReplicaPaths = { spec: '.spec.replicas', status: '.status.replicas' };

const segments = (path: string): string[] => path.replace(/^\./, '').split('.');
const valueAt = (o: unknown, path: string): unknown => segments(path).reduce<unknown>((v, k) => obj(v)[k], o);

/** `o` with `value` at `path`, the objects on the way created (unstructured.SetNestedField). */
const withValueAt = (o: KubeObject, path: string, value: unknown): KubeObject => {
  const next = clone(o);
  const keys = segments(path);
  let at: Record<string, unknown> = next;
  for (const k of keys.slice(0, -1)) at = (at[k] = { ...obj(at[k]) }) as Record<string, unknown>;
  at[keys[keys.length - 1]!] = value;
  return next;
};

/** Where a Scale kind lives: autoscaling/v1, or the beta groups' own (apps/v1beta1, extensions/v1beta1). */
export interface ScaleKind {
  group: string;
  version: string;
}

const AutoscalingV1: ScaleKind = { group: 'autoscaling', version: 'v1' };

/**
 * The Scale of `o`: its identity, the desired count, and the observed count with the selector that
 * counts it. The beta groups' Scale has the selector as a map (matchLabels) and as a string (targetSelector).
 */
function toScale(o: KubeObject, selector: (o: KubeObject) => string, paths: ReplicaPaths, as: ScaleKind): KubeObject {
  const { name, namespace, uid, resourceVersion, creationTimestamp } = o.metadata;
  const replicas = count(valueAt(o, paths.status));
  const legacy = as.group !== 'autoscaling';
  return {
    kind: 'Scale',
    apiVersion: `${as.group}/${as.version}`,
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: count(valueAt(o, paths.spec)) },
    status: legacy ? { replicas, selector: obj(obj(obj(o.spec).selector).matchLabels), targetSelector: selector(o) } : { replicas, selector: selector(o) },
  };
}

/** ValidateScale: the replica count a Scale body asks for, or 422 / 400 naming what is wrong. */
function requestedReplicas(body: unknown, name: string, as: ScaleKind): { replicas: number; resourceVersion?: string } {
  if (!isObject(body)) throw badRequest('the body must be an autoscaling/v1 Scale object');
  const meta = obj(body.metadata);
  if (meta.name !== undefined && meta.name !== name)
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`);
  const replicas = obj(body.spec).replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    const message = typeof replicas === 'number' ? 'must be greater than or equal to 0' : 'must be an integer';
    throw invalid('Scale', as.group, name, [{ reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(replicas ?? null)}: ${message}`, field: 'spec.replicas' }]);
  }
  const resourceVersion = typeof meta.resourceVersion === 'string' && meta.resourceVersion ? meta.resourceVersion : undefined;
  return { replicas, ...(resourceVersion && { resourceVersion }) };
}

/**
 * `scale` of a kind whose replica counts are at `paths`; `selector`: the label selector string of what
 * it counts; `as`: the Scale kind it answers with.
 */
export const scale = (selector: (o: KubeObject) => string, paths: ReplicaPaths = DefaultPaths, as: ScaleKind = AutoscalingV1): SubresourceDef => ({
  verbs: ['get', 'patch', 'update'],
  kind: { ...as, kind: 'Scale' },
  behaviour: {
    type: 'view',
    read: (o) => toScale(o, selector, paths, as),
    decode(body, { name }) {
      const { replicas, resourceVersion } = requestedReplicas(body, name, as);
      return { view: replicas, resourceVersion };
    },
    merge: (replicas: number, old) => withValueAt(old, paths.spec, replicas),
  },
});
