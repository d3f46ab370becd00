/**
 * `/openapi/v2`: the schemas of /openapi/v3 (openapi.ts: built-in kinds from their messages, custom
 * resources from their CRDs, open objects for kinds stored as given) as one Swagger 2.0 document, as
 * kube-apiserver serves it: definitions named as Kubernetes names them, each kind's marked with
 * `x-kubernetes-group-version-kind`, and each resource's GET paths. kubectl validates manifests
 * against it (`--validate=strict` when the server offers no field validation) and, for built-in
 * kinds, computes `apply`'s strategic merge patch from it; client-go asks for the protobuf form
 * (openapi-v2-protobuf.ts).
 *
 * So that a manifest kubectl 1.32 accepts on Kubernetes is accepted here, a field Kubernetes documents
 * that these messages lack (they hold an older field set) is declared without a type; and so that
 * `apply` merges lists as this server's strategic merge does, each list of a built-in kind carries
 * the patch strategy and merge key the server applies (registry/generic/strategic-merge.ts).
 */
import { createHash } from 'node:crypto';
import type { ResourceDefinition } from '../registry/definition.js';
import { listRule } from '../registry/generic/strategic-merge.js';
import { byGroupVersion, docsOf, groupVersionSchemas, type Schema } from './openapi.js';
import { encodeOpenApiV2 } from './openapi-v2-protobuf.js';

const v3Ref = '#/components/schemas/';
const v2Ref = '#/definitions/';

/** Keywords Swagger 2.0 does not have; kube-apiserver drops them from the schemas it publishes in v2. */
const dropped = new Set(['anyOf', 'oneOf', 'not', 'nullable']);

/** A v3 schema in Swagger 2.0's terms: references to definitions, a lone `allOf` reference as `$ref`. */
function toV2(schema: Schema, custom: boolean): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (dropped.has(key)) continue;
    if (key === '$ref') out.$ref = String(value).replace(v3Ref, v2Ref);
    else if (key === 'allOf' && Array.isArray(value) && value.length === 1 && (value[0] as Schema).$ref) out.$ref = String((value[0] as Schema).$ref).replace(v3Ref, v2Ref);
    else if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Record<string, Schema>).map(([k, v]) => [k, toV2(v, custom)]));
    else if ((key === 'items' || key === 'additionalProperties') && typeof value === 'object' && value !== null && !Array.isArray(value)) out[key] = toV2(value as Schema, custom);
    else if (key === 'allOf' && Array.isArray(value)) out.allOf = value.map((v) => toV2(v as Schema, custom));
    else out[key] = value;
  }
  // Kubernetes' IntOrString in v2 is a string of format int-or-string; a CRD's int-or-string field has no type.
  if (schema['x-kubernetes-int-or-string'] === true && !custom) Object.assign(out, { type: 'string', format: 'int-or-string' });
  // A v2 validator knows no preserve-unknown-fields: an object that keeps any field is declared without
  // its fields, which kubectl reads as "anything" (listing some would make it refuse the others).
  if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out.properties;
    delete out.required;
  }
  return out;
}

/** The path strategic-merge.ts keys its list rules by, for a field of the named built-in schema. */
const rulePath = (definition: string, field: string): string[] =>
  definition.endsWith('.core.v1.ServiceSpec') ? ['spec', field] : definition.endsWith('.meta.v1.ObjectMeta') ? ['metadata', field] : [field];

/** Patch metadata and the documented fields the messages lack, on one built-in definition. */
function completeBuiltIn(name: string, schema: Schema): void {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return;
  for (const [field, property] of Object.entries(properties)) {
    if (property.type !== 'array') continue;
    const rule = listRule(rulePath(name, field), 'kubernetes');
    if (rule.type === 'map') Object.assign(property, { 'x-kubernetes-patch-merge-key': rule.keys[0], 'x-kubernetes-patch-strategy': 'merge' });
    else if (rule.type === 'set') property['x-kubernetes-patch-strategy'] = 'merge';
  }
  for (const [field, description] of Object.entries(docsOf(name)?.properties ?? {})) properties[field] ??= { description };
}

type Gvk = { group: string; version: string; kind: string };

/** Adds a group version's definitions; a schema already there (one message at several versions) gains the version's kinds. */
function merge(definitions: Record<string, Schema>, name: string, schema: Schema): void {
  const known = definitions[name];
  if (!known) return void (definitions[name] = schema);
  const kinds = (known['x-kubernetes-group-version-kind'] ?? []) as Gvk[];
  for (const gvk of (schema['x-kubernetes-group-version-kind'] ?? []) as Gvk[])
    if (!kinds.some((k) => k.group === gvk.group && k.version === gvk.version && k.kind === gvk.kind)) kinds.push(gvk);
  if (kinds.length) known['x-kubernetes-group-version-kind'] = kinds;
}

const produces = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];

/** A v3 GET operation (openapi.ts readPaths) as Swagger 2.0's. */
function operationV2(operation: Record<string, unknown>): Record<string, unknown> {
  const { responses, ...rest } = operation as { responses: Record<string, { description: string; content: Record<string, { schema: Schema }> }> };
  const answers = Object.fromEntries(
    Object.entries(responses).map(([code, r]) => [code, { description: r.description, schema: toV2(r.content['application/json']!.schema, false) }]),
  );
  return { ...rest, produces, responses: answers };
}

export interface OpenApiV2Document {
  swagger: '2.0';
  info: { title: string; version: string };
  paths: Record<string, { get: Record<string, unknown> }>;
  definitions: Record<string, Schema>;
}

/** The one document of every served kind (built on first use and kept: the app rebuilds it when definitions change). */
export function openApiV2(definitions: readonly ResourceDefinition[], title = 'cluster-api'): OpenApiV2Document {
  const customNames = new Set<string>();
  const all: Record<string, Schema> = {};
  const paths: OpenApiV2Document['paths'] = {};
  for (const [path, defs] of byGroupVersion(definitions)) {
    const { schemas, paths: v3Paths } = groupVersionSchemas(path, defs);
    for (const def of defs) if (def.custom) customNames.add(`${def.group}/${def.kind}`);
    for (const [name, schema] of Object.entries(schemas)) {
      const gvk = (schema['x-kubernetes-group-version-kind'] as Gvk[] | undefined)?.[0];
      const custom = gvk !== undefined && customNames.has(`${gvk.group}/${gvk.kind}`);
      const converted = toV2(schema, custom);
      if (!custom && name.startsWith('io.k8s.') && !all[name]) completeBuiltIn(name, converted);
      merge(all, name, converted);
    }
    for (const [p, item] of Object.entries(v3Paths)) paths[p] = { get: operationV2((item as { get: Record<string, unknown> }).get) };
  }
  return { swagger: '2.0', info: { title, version: 'v1' }, paths, definitions: all };
}

/** An encoded form of the document and its validator, `"<SHA-512 in hex>"` as kube-openapi computes it. */
export interface Encoded {
  body: Buffer;
  etag: string;
}

export const encoded = (body: Buffer): Encoded => ({ body, etag: `"${createHash('sha512').update(body).digest('hex').toUpperCase()}"` });

/** The document and its two encodings, each made on first use (the app keeps one per registry generation). */
export class OpenApiV2 {
  private doc: OpenApiV2Document | undefined;
  private json: Encoded | undefined;
  private pb: Encoded | undefined;

  constructor(private readonly definitions: readonly ResourceDefinition[]) {}

  document(): OpenApiV2Document {
    return (this.doc ??= openApiV2(this.definitions));
  }

  asJson(): Encoded {
    return (this.json ??= encoded(Buffer.from(JSON.stringify(this.document()))));
  }

  asProtobuf(): Encoded {
    return (this.pb ??= encoded(encodeOpenApiV2(this.document())));
  }
}
