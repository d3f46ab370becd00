/** Pod: Kubernetes' pod strategy — status starts Pending, the spec is immutable but for a few fields. */
import { isDeepStrictEqual } from 'node:util';
import type { DeleteOptions, KubeObject } from '../../api/meta.js';
import { forbiddenField, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, child, column, core, obj, spec, status, str, type Obj } from './common.js';
import { binding } from '../subresources/binding.js';
import { eviction } from '../subresources/eviction.js';
import { ephemeralContainers } from '../subresources/ephemeral-containers.js';
import { podAttach, podExec, podLog, podPortForward } from '../subresources/pod-connect.js';
import { podProxy } from '../subresources/proxy.js';
import { statusSubresource } from '../subresources/status.js';
import { ownPodsOnly, podRestriction } from './node-restriction.js';
import { defaultPodSpec, defaultRequestsFromLimits, validatePodSpec } from './pod-spec.js';
import { podQosClass } from '../../api/qos.js';

const containers = (o: KubeObject): Obj[] => arr(status(o).containerStatuses).map(obj);

const podStatus = (o: KubeObject): string => {
  if (o.metadata.deletionTimestamp) return 'Terminating';
  const waiting = containers(o).map((c) => str(obj(obj(c.state).waiting).reason) || str(obj(obj(c.state).terminated).reason)).find(Boolean);
  return str(status(o).reason) || waiting || str(status(o).phase);
};

const UpdatableSpecMessage =
  'pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)';

/** The new spec with the mutable fields taken from the old one must equal the old spec. */
const validateSpecUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  const next = structuredClone(spec(o));
  const prev = spec(old);
  const images = (s: Obj, f: string) => arr(s[f]).map((c) => obj(c).image);
  for (const f of ['containers', 'initContainers']) {
    const was = images(prev, f);
    arr(next[f]).forEach((c, i) => { if (i < was.length) obj(c).image = was[i]; });
  }
  next.activeDeadlineSeconds = prev.activeDeadlineSeconds;
  const tolerations = arr(next.tolerations);
  if (arr(prev.tolerations).every((t) => tolerations.some((n) => isDeepStrictEqual(n, t)))) next.tolerations = prev.tolerations;
  for (const s of [next, prev]) for (const [k, v] of Object.entries(s)) if (v === undefined) delete s[k];
  return isDeepStrictEqual(next, prev) ? [] : [forbiddenField('spec', UpdatableSpecMessage)];
};

/**
 * Kubernetes' CheckGracefulDelete: the request's period, else the pod's terminationGracePeriodSeconds;
 * a pod no node runs (no spec.nodeName: nothing schedules pods here unless a client binds them) and a
 * finished pod go at once. A scheduled pod's grace period ends in the pod reaper, standing in for the kubelet.
 */
const gracePeriod = (o: KubeObject, options: DeleteOptions): number => {
  if (!str(spec(o).nodeName)) return 0;
  const phase = str(status(o).phase);
  if (phase === 'Succeeded' || phase === 'Failed') return 0;
  const asked = options.gracePeriodSeconds ?? spec(o).terminationGracePeriodSeconds;
  return typeof asked === 'number' && asked > 0 ? asked : 0;
};

/** printPod's READINESS GATES: how many of the pod's readiness gates have a True condition, `<none>` without gates. */
const readinessGates = (o: KubeObject): string => {
  const gates = arr(spec(o).readinessGates).map((g) => str(obj(g).conditionType));
  if (!gates.length) return '<none>';
  const conditions = arr(status(o).conditions).map(obj);
  const met = gates.filter((type) => conditions.find((c) => c.type === type)?.status === 'True').length;
  return `${met}/${gates.length}`;
};

export const pod = core({
  kind: 'Pod',
  plural: 'pods',
  singular: 'pod',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['po'],
  categories: ['all'],
  subresources: { status: statusSubresource(), binding, eviction, log: podLog, exec: podExec, attach: podAttach, portforward: podPortForward, proxy: podProxy, ephemeralcontainers: ephemeralContainers },
  strategy: {
    prepareForCreate(o) {
      // The ServiceAccount admission plugin gives a mirror pod no account: its kubelet runs it without one.
      defaultPodSpec(child(o, 'spec'), { account: !('kubernetes.io/config.mirror' in (o.metadata.annotations ?? {})) });
      defaultRequestsFromLimits(spec(o));
      o.status = { phase: 'Pending', qosClass: podQosClass(spec(o)) };
    },
    validate: (o) => validatePodSpec(spec(o), 'spec'),
    validateCreate: (o) => (arr(spec(o).ephemeralContainers).length ? [forbiddenField('spec.ephemeralContainers', 'cannot be set on create')] : []),
    validateUpdate: validateSpecUpdate,
    fieldsOf: (o) => ({
      'spec.nodeName': str(spec(o).nodeName),
      'spec.restartPolicy': str(spec(o).restartPolicy),
      'spec.schedulerName': str(spec(o).schedulerName),
      'spec.serviceAccountName': str(spec(o).serviceAccountName),
      'status.phase': str(status(o).phase),
      'status.podIP': str(status(o).podIP),
      'status.nominatedNodeName': str(status(o).nominatedNodeName),
    }),
  },
  deletion: { gracePeriod, undeletable: ownPodsOnly },
  hooks: { admit: podRestriction },
  columns: [
    column('Ready', (o) => `${containers(o).filter((c) => c.ready === true).length}/${arr(spec(o).containers).length}`),
    column('Status', podStatus),
    column('Restarts', (o) => containers(o).reduce((n, c) => n + (Number(c.restartCount) || 0), 0), { type: 'integer' }),
    column('IP', (o) => str(status(o).podIP) || '<none>', { priority: 1 }),
    column('Node', (o) => str(spec(o).nodeName) || '<none>', { priority: 1 }),
    column('Nominated Node', (o) => str(status(o).nominatedNodeName) || '<none>', { priority: 1 }),
    column('Readiness Gates', readinessGates, { priority: 1 }),
  ],
});
