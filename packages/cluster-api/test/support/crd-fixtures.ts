/** The test CRD of the CRD tests: two versions, status and scale subresources, printer columns, selectable fields, defaults, list types. */
import { stringify } from 'yaml';

const widgetSchema = (extra: Record<string, unknown> = {}) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['color'],
        properties: {
          color: { type: 'string', enum: ['red', 'green', 'blue'] },
          replicas: { type: 'integer', minimum: 0, maximum: 100, default: 1 },
          size: { 'x-kubernetes-int-or-string': true },
          name: { type: 'string', pattern: '^[a-z]+$', maxLength: 10 },
          url: { type: 'string', format: 'uri' },
          selector: { type: 'string' },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          note: { type: 'string', nullable: true },
          ...extra,
        },
      },
      status: {
        type: 'object',
        properties: { replicas: { type: 'integer' }, phase: { type: 'string' }, selector: { type: 'string' } },
      },
    },
  },
});

const columns = [
  { name: 'Color', type: 'string', jsonPath: '.spec.color' },
  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  { name: 'Name', type: 'string', jsonPath: '.spec.name', priority: 1 },
];

const subresources = {
  status: {},
  scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
};

export const widgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wg'], categories: ['all', 'toys'] },
    versions: [
      { name: 'v1', served: true, storage: true, schema: widgetSchema(), subresources, additionalPrinterColumns: columns, selectableFields: [{ jsonPath: '.spec.color' }] },
      { name: 'v1beta1', served: true, storage: false, schema: widgetSchema({ legacy: { type: 'boolean' } }), subresources, additionalPrinterColumns: columns },
    ],
  },
};

export const widgetCrdYaml = stringify(widgetCrd);

export const widget = (name: string, spec: Record<string, unknown> = { color: 'red' }, version = 'v1') => ({
  apiVersion: `example.com/${version}`,
  kind: 'Widget',
  metadata: { name },
  spec,
});

export const KnativeCrds = '/work/shared/crds/knative-eventing';
