/**
 * pods/{name}/ephemeralcontainers, as kube-apiserver serves it (`kubectl debug <pod> --image=…`
 * patches it): GET answers the Pod, and a write through it changes only
 * `spec.ephemeralContainers`, by adding containers (ValidatePodEphemeralContainersUpdate): existing
 * ones may be neither changed nor removed; a new one has a unique name among all the pod's
 * containers, an image, no ports, probes, lifecycle, resources or restartPolicy, and a
 * `targetContainerName` (if any) naming one of the pod's containers. New ones get a container's
 * defaults. The node agent runs them and reports them in `status.ephemeralContainerStatuses`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { clone } from '../generic/meta.js';
import { forbiddenField, notFoundValue, required, type FieldError } from '../generic/validation.js';
import { decodeObject } from '../generic/views.js';
import { arr, child, obj, spec, str, type Obj } from '../kinds/common.js';
import { defaultContainer, validateContainers } from '../kinds/pod-spec.js';
import type { SubresourceDef } from '../subresource.js';

const At = 'spec.ephemeralContainers';
/** What an ephemeral container may not have (validateEphemeralContainers' disallowed fields). */
const Disallowed = ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'restartPolicy', 'resizePolicy'];

const list = (pod: KubeObject): Obj[] => arr(spec(pod).ephemeralContainers).map(obj);
const names = (pod: KubeObject, field: string): string[] => arr(spec(pod)[field]).map((c) => str(obj(c).name));

function validateAdditions(pod: KubeObject, old: KubeObject): FieldError[] {
  const before = list(old);
  const after = list(pod);
  const errs: FieldError[] = [];
  before.forEach((was) => {
    const i = after.findIndex((c) => c.name === was.name);
    if (i < 0) errs.push(forbiddenField(At, `existing ephemeral containers "${str(was.name)}" may not be removed`));
    else if (!isDeepStrictEqual(after[i], was)) errs.push(forbiddenField(`${At}[${i}]`, `existing ephemeral containers "${str(was.name)}" may not be changed`));
  });
  if (errs.length) return errs;
  errs.push(...validateContainers(after, At, false));
  const regular = [...names(pod, 'containers'), ...names(pod, 'initContainers')];
  after.forEach((c, i) => {
    if (before.some((b) => b.name === c.name)) return;
    const f = `${At}[${i}]`;
    if (regular.includes(str(c.name))) errs.push({ type: 'FieldValueDuplicate', field: `${f}.name`, message: `Duplicate value: "${str(c.name)}"` });
    for (const field of Disallowed) if (c[field] !== undefined) errs.push(forbiddenField(`${f}.${field}`, 'cannot be set for an Ephemeral Container'));
    const resources = obj(c.resources);
    if (Object.keys(resources).some((k) => Object.keys(obj(resources[k])).length > 0 || (k !== 'limits' && k !== 'requests')))
      errs.push(forbiddenField(`${f}.resources`, 'cannot be set for an Ephemeral Container'));
    const target = c.targetContainerName;
    if (target !== undefined && !regular.includes(str(target))) errs.push(notFoundValue(`${f}.targetContainerName`, target));
    if (c.image !== undefined && typeof c.image !== 'string') errs.push(required(`${f}.image`));
  });
  return errs;
}

export const ephemeralContainers: SubresourceDef = {
  verbs: ['get', 'patch', 'update'],
  behaviour: {
    type: 'view',
    strategy: {
      prepareForUpdate(pod, old) {
        const known = new Set(list(old).map((c) => c.name));
        for (const c of list(pod)) if (!known.has(c.name)) defaultContainer(c);
      },
      validateUpdate: validateAdditions,
    },
    decode: decodeObject,
    merge(view, old) {
      const next = clone(old);
      const wanted = spec(view).ephemeralContainers;
      const target = child(next as Obj, 'spec');
      if (wanted === undefined || wanted === null) delete target.ephemeralContainers;
      else target.ephemeralContainers = clone(wanted);
      next.metadata = { ...next.metadata, resourceVersion: view.metadata.resourceVersion, managedFields: view.metadata.managedFields };
      return next;
    },
  },
};
