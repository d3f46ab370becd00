/** PodTemplate: a named PodSpec with labels, the template controllers stamp pods from. */
import type { KubeObject } from '../../api/meta.js';
import { AllVerbs, arr, child, column, core, obj, str } from './common.js';
import { defaultPodSpec, validatePodSpec } from './pod-spec.js';
import { validateLabels } from '../generic/validation.js';

const template = (o: KubeObject) => obj(o.template);
const containers = (o: KubeObject) => arr(obj(template(o).spec).containers).map(obj);

export const podTemplate = core({
  kind: 'PodTemplate',
  plural: 'podtemplates',
  singular: 'podtemplate',
  namespaced: true,
  verbs: AllVerbs,
  fields: ['template'],
  strategy: {
    prepareForCreate(o) {
      defaultPodSpec(child(child(o, 'template'), 'spec'));
    },
    prepareForUpdate(o) {
      defaultPodSpec(child(child(o, 'template'), 'spec'));
    },
    validate: (o) => [
      ...validateLabels(obj(obj(template(o).metadata).labels) as Record<string, string>, 'template.metadata.labels'),
      ...validatePodSpec(obj(template(o).spec), 'template.spec'),
    ],
  },
  // podTemplateColumnDefinitions: no Age.
  columnLayout: 'declared',
  columns: [
    column('Containers', (o) => containers(o).map((c) => str(c.name)).join(',')),
    column('Images', (o) => containers(o).map((c) => str(c.image)).join(',')),
    column('Pod Labels', (o) => Object.entries(obj(obj(template(o).metadata).labels)).map(([k, v]) => `${k}=${String(v)}`).join(',')),
  ],
});
