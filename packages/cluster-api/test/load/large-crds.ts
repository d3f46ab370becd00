/**
 * Six CRDs shaped like cert-manager's (group cert-manager.io / acme.cert-manager.io, one version with
 * status subresource and printer columns, a deep openAPIV3Schema full of long descriptions), each built
 * to a target size: 13 KB to 330 KB of YAML, as cert-manager's published CRDs are.
 */
import { stringify } from 'yaml';

/** Kind, plural, group and the size of its YAML document in KB. */
const Shapes = [
  { kind: 'CertificateRequest', plural: 'certificaterequests', group: 'cert-manager.io', kb: 13 },
  { kind: 'Order', plural: 'orders', group: 'acme.cert-manager.io', kb: 18 },
  { kind: 'Certificate', plural: 'certificates', group: 'cert-manager.io', kb: 60 },
  { kind: 'Challenge', plural: 'challenges', group: 'acme.cert-manager.io', kb: 190 },
  { kind: 'Issuer', plural: 'issuers', group: 'cert-manager.io', kb: 320 },
  { kind: 'ClusterIssuer', plural: 'clusterissuers', group: 'cert-manager.io', kb: 330 },
] as const;

const prose =
  'The name of the resource being referred to, with the semantics of the field it belongs to spelled out as upstream API documentation does: ' +
  'what it refers to, which namespace it is looked up in, and what happens when it is absent or cannot be resolved at the time of issuance.';

/** One property object per `i`: a mix of the leaf types and nesting cert-manager's schemas have. */
function field(i: number): Record<string, unknown> {
  const description = `${prose} (field ${i})`;
  switch (i % 4) {
    case 0:
      return { description, type: 'string', maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' };
    case 1:
      return { description, type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' };
    case 2:
      return {
        description,
        type: 'object',
        required: ['name'],
        properties: { name: { description, type: 'string' }, key: { description, type: 'string' } },
      };
    default:
      return { description, type: 'integer', format: 'int32', minimum: 0 };
  }
}

function crd(shape: (typeof Shapes)[number], fields: number): Record<string, unknown> {
  const { kind, plural, group } = shape;
  // Grouped in nested objects of 20 properties, as solver and issuer configs nest.
  const groups: Record<string, unknown> = {};
  for (let g = 0; g * 20 < fields; g++) {
    const properties: Record<string, unknown> = {};
    for (let i = g * 20; i < Math.min(fields, (g + 1) * 20); i++) properties[`field${i}`] = field(i);
    groups[`section${g}`] = { description: `${prose} (section ${g})`, type: 'object', properties };
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}`, labels: { app: 'cert-manager', 'app.kubernetes.io/name': 'cert-manager' } },
    spec: {
      group,
      names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), categories: ['cert-manager'] },
      scope: kind.startsWith('Cluster') ? 'Cluster' : 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { jsonPath: '.status.conditions[?(@.type=="Ready")].status', name: 'Ready', type: 'string' },
            { jsonPath: '.metadata.creationTimestamp', name: 'Age', type: 'date' },
          ],
          schema: {
            openAPIV3Schema: {
              description: `A ${kind} as cert-manager defines it.`,
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: { type: 'object', properties: groups },
                status: {
                  type: 'object',
                  properties: {
                    conditions: {
                      type: 'array',
                      'x-kubernetes-list-type': 'map',
                      'x-kubernetes-list-map-keys': ['type'],
                      items: { type: 'object', required: ['status', 'type'], properties: { status: { type: 'string', enum: ['True', 'False', 'Unknown'] }, type: { type: 'string' } } },
                    },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** The six CRDs as YAML documents, each within 2 % of its target size. */
export function largeCrds(): { name: string; yaml: string }[] {
  return Shapes.map((shape) => {
    const target = shape.kb * 1024;
    // Size grows linearly with the field count: measure one, scale, then settle on the target.
    const per = stringify(crd(shape, 41)).length - stringify(crd(shape, 1)).length;
    let fields = Math.max(1, Math.round((target - stringify(crd(shape, 1)).length) / (per / 40)));
    let yaml = stringify(crd(shape, fields));
    while (yaml.length < target) yaml = stringify(crd(shape, ++fields));
    return { name: `${shape.plural}.${shape.group}`, yaml };
  });
}
