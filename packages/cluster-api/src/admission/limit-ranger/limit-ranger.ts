/**
 * LimitRanger (plugin/pkg/admission/limitranger): the LimitRanges of a pod's namespace fill in the
 * requests and limits its containers (and init containers) name none of (`default`,
 * `defaultRequest` of a Container item), recorded in the `kubernetes.io/limit-ranger` annotation,
 * and refuse a pod or a PersistentVolumeClaim outside an item's `min`, `max` or
 * `maxLimitRequestRatio`, with kube-apiserver's messages. Pods are looked at when created only (their
 * resources cannot change); claims on create and update.
 */
import type { KubeObject } from '../../api/meta.js';
import { forbidden } from '../../api/errors.js';
import { arr, obj, spec, type Obj } from '../../registry/kinds/common.js';
import { listedNamespaceObjects, perRequest } from '../lookup.js';
import type { AdmissionPlugin, AdmissionRequest } from '../plugin.js';
import { containersOf, minConstraint, maxConstraint, maxRequestConstraint, podTotals, ratioConstraint, type Resources } from './constraints.js';

export const LimitRangerAnnotation = 'kubernetes.io/limit-ranger';

const limitRanges = perRequest((req) => listedNamespaceObjects(req, '', 'v1', 'limitranges'));

const items = (ranges: readonly KubeObject[], type: string): Obj[] =>
  ranges.flatMap((r) => arr(spec(r).limits).map(obj)).filter((l) => l.type === type);

const sortedEntries = (m: unknown): [string, unknown][] => Object.entries(obj(m)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** mergeContainerResources: what the container lacks, from the defaults; the annotation's phrases. */
const mergeDefaults = (c: Obj, defaults: { limits: Obj; requests: Obj }, what: string): string[] => {
  const resources = (c.resources = obj(c.resources)) as Obj;
  const phrases: string[] = [];
  for (const [field, word] of [['limits', 'limit'], ['requests', 'request']] as const) {
    const list = obj(resources[field]);
    const set = sortedEntries(defaults[field]).filter(([k]) => !(k in list)).map(([k, v]) => ((list[k] = v), k));
    if (set.length === 0) continue;
    resources[field] = list;
    phrases.push(`${set.join(', ')} ${word} for ${what} ${String(c.name)}`);
  }
  // kube-apiserver lists requests before limits.
  return phrases.reverse();
};

const isPod = (req: AdmissionRequest) => req.group === '' && req.resource === 'pods' && req.operation === 'CREATE';
const isClaim = (req: AdmissionRequest) => req.group === '' && req.resource === 'persistentvolumeclaims' && (req.operation === 'CREATE' || req.operation === 'UPDATE');

/** Every broken constraint of the pod, in kube-apiserver's order (items in order, resources by name). */
const podErrors = (pod: KubeObject, ranges: readonly KubeObject[]): string[] => {
  const errs: string[] = [];
  const check = (type: string, l: Obj, requests: Resources, limits: Resources) => {
    for (const [k, v] of sortedEntries(l.min)) errs.push(...minConstraint(type, k, v, requests, limits));
    for (const [k, v] of sortedEntries(l.max)) errs.push(...maxConstraint(type, k, v, requests, limits));
    for (const [k, v] of sortedEntries(l.maxLimitRequestRatio)) errs.push(...ratioConstraint(type, k, v, requests, limits));
  };
  for (const l of ranges.flatMap((r) => arr(spec(r).limits).map(obj))) {
    if (l.type === 'Container') for (const c of containersOf(spec(pod))) check('Container', l, obj(obj(c.resources).requests), obj(obj(c.resources).limits));
    if (l.type === 'Pod') {
      const { requests, limits } = podTotals(spec(pod));
      check('Pod', l, requests, limits);
    }
  }
  return errs;
};

const claimErrors = (claim: KubeObject, ranges: readonly KubeObject[]): string[] => {
  const requests = obj(obj(spec(claim).resources).requests);
  return items(ranges, 'PersistentVolumeClaim').flatMap((l) => [
    ...sortedEntries(l.min).flatMap(([k, v]) => minConstraint('PersistentVolumeClaim', k, v, requests, {})),
    ...sortedEntries(l.max).flatMap(([k, v]) => maxRequestConstraint('PersistentVolumeClaim', k, v, requests)),
  ]);
};

/** utilerrors.NewAggregate's message: one error as itself, several in brackets. */
const aggregate = (errs: readonly string[]): string => {
  const unique = [...new Set(errs)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
};

export const LimitRanger: AdmissionPlugin = {
  name: 'LimitRanger',
  handles: (req) => !req.subresource && (isPod(req) || isClaim(req)),
  async mutate(req) {
    if (!isPod(req)) return false;
    const podSpec = spec(req.object);
    let changed = false;
    // Each LimitRange in turn (defaultContainerResourceRequirements: its Container items together); the last that set something is the annotation.
    for (const range of await limitRanges(req)) {
      const containerItems = items([range], 'Container');
      if (containerItems.length === 0) continue;
      const defaults = { limits: Object.assign({}, ...containerItems.map((l) => obj(l.default))), requests: Object.assign({}, ...containerItems.map((l) => obj(l.defaultRequest))) };
      const phrases = [
        ...arr(podSpec.containers).map(obj).flatMap((c) => mergeDefaults(c, defaults, 'container')),
        ...arr(podSpec.initContainers).map(obj).flatMap((c) => mergeDefaults(c, defaults, 'init container')),
      ];
      if (phrases.length === 0) continue;
      req.object.metadata.annotations = { ...req.object.metadata.annotations, [LimitRangerAnnotation]: `LimitRanger plugin set: ${phrases.join('; ')}` };
      changed = true;
    }
    return changed;
  },
  async validate(req) {
    const ranges = await limitRanges(req);
    if (ranges.length === 0) return;
    const errs = isPod(req) ? podErrors(req.object, ranges) : claimErrors(req.object, ranges);
    if (errs.length > 0) throw forbidden({ group: req.group, resource: req.resource }, req.name, aggregate(errs));
  },
};
