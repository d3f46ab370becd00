/**
 * pods/{name}/binding, as Kubernetes' BindingREST: how a scheduler assigns a pod to a node. It sets
 * the otherwise immutable spec.nodeName, once, adds the binding's annotations and the PodScheduled
 * condition, and answers a Success Status. A bound pod is then deleted gracefully (pod.ts).
 */
import type { KubeObject } from '../../api/meta.js';
import type { SubresourceDef } from '../subresource.js';
import { badRequest, conflict, invalid } from '../../api/errors.js';
import { clone, isObject, timestamp } from '../generic/meta.js';
import { notSupported, required, type FieldError } from '../generic/validation.js';
import { arr, obj, str } from '../kinds/common.js';

interface Binding {
  node: string;
  annotations: Record<string, string>;
}

const pods = { group: '', resource: 'pods' };

const check = (body: unknown, name: string): Binding => {
  if (!isObject(body) || (body.kind !== undefined && body.kind !== 'Binding')) throw badRequest('the body must be a v1 Binding');
  const meta = obj(body.metadata);
  if (meta.name !== undefined && meta.name !== name) throw badRequest('name in URL does not match name in Binding object');
  const target = obj(body.target);
  const errs: FieldError[] = [];
  if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node') errs.push(notSupported('target.kind', target.kind, ['Node', '<empty>']));
  if (!str(target.name)) errs.push(required('target.name'));
  if (errs.length > 0) throw invalid('Binding', '', name, errs.map((e) => ({ reason: e.type, message: e.message, field: e.field })));
  const annotations = Object.fromEntries(Object.entries(obj(meta.annotations)).filter((e): e is [string, string] => typeof e[1] === 'string'));
  return { node: str(target.name), annotations };
};

/** The pod bound to `node`: refused once it is being deleted or already bound. */
const bind = (old: KubeObject, { node, annotations }: Binding): KubeObject => {
  const name = old.metadata.name ?? '';
  if (old.metadata.deletionTimestamp) throw conflict(pods, name, `pod ${name} is being deleted, cannot be assigned to a host`);
  const assigned = str(obj(old.spec).nodeName);
  if (assigned) throw conflict(pods, name, `pod ${name} is already assigned to node ${JSON.stringify(assigned)}`);
  const next = clone(old);
  next.spec = { ...obj(next.spec), nodeName: node };
  if (Object.keys(annotations).length > 0) next.metadata.annotations = { ...next.metadata.annotations, ...annotations };
  const status = obj(next.status);
  const conditions = arr(status.conditions).filter((c) => obj(c).type !== 'PodScheduled');
  next.status = { ...status, conditions: [...conditions, { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: timestamp() }] };
  return next;
};

const Bound = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as const;

export const binding: SubresourceDef = {
  verbs: ['create'],
  kind: { group: '', version: 'v1', kind: 'Binding' },
  behaviour: {
    type: 'action',
    check,
    async act(asked: Binding, parent) {
      // Past the pod's update rules: spec.nodeName is immutable to every other write.
      await parent.update((old) => bind(old, asked));
      return { ...Bound, metadata: {} } as unknown as KubeObject;
    },
  },
};
