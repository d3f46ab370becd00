/**
 * OpenAPI v3, as kube-apiserver serves it: `/openapi/v3` lists one document per group version, and
 * `/openapi/v3/api/v1` or `/openapi/v3/apis/{group}/{version}` holds that group version's schemas,
 * each kind's marked with `x-kubernetes-group-version-kind`. This is what `kubectl explain` reads.
 *
 * Typed kinds are described from their protobuf messages, the .proto files the wire format uses, so
 * a field cannot be in one and missing from the other; kinds without a message (stored as given) get
 * an open object with apiVersion, kind and metadata. Paths list only each resource's GET, which is
 * how kubectl finds a resource's kind: with no PATCH operation kubectl decides, as with no OpenAPI v3
 * at all, that server-side field validation and OpenAPI-driven strategic merge patches are not
 * offered, and keeps using its built-in types for `apply`.
 */
import { createHash } from 'node:crypto';
import type { Field, Type } from 'protobufjs';
import protobuf from 'protobufjs';
import { isInlined } from '../protobuf/convert.js';
import { messageOf, metaMessage } from '../protobuf/schema.js';
import type { ResourceDefinition } from '../registry/definition.js';
import { groupVersion } from '../registry/definition.js';

type Schema = Record<string, unknown>;

/** What Go's JSON makes of the types whose JSON is not their message (see protobuf/special.ts). */
const specialSchemas: ReadonlyMap<string, Schema> = new Map([
  ['.k8s.io.apimachinery.pkg.apis.meta.v1.Time', { type: 'string', format: 'date-time' }],
  ['.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime', { type: 'string', format: 'date-time' }],
  ['.k8s.io.apimachinery.pkg.api.resource.Quantity', { type: 'string' }],
  // How OpenAPI v3 says "an integer or a string"; kubectl explain shows it as <IntOrString>.
  ['.k8s.io.apimachinery.pkg.util.intstr.IntOrString', { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }],
  ['.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1', { type: 'object' }],
  ['.k8s.io.apimachinery.pkg.runtime.RawExtension', { type: 'object' }],
]);

const scalarSchemas: Readonly<Record<string, Schema>> = {
  string: { type: 'string' },
  bytes: { type: 'string', format: 'byte' },
  bool: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  double: { type: 'number', format: 'double' },
  float: { type: 'number', format: 'float' },
};

/** Kubernetes' schema names: the Go package path with its domain reversed (`io.k8s.api.core.v1.Pod`). */
export function schemaName(protoFullName: string): string {
  const parts = protoFullName.replace(/^\./, '').split('.');
  if ((parts[0] === 'k8s' && parts[1] === 'io') || (parts[0] === 'github' && parts[1] === 'com')) [parts[0], parts[1]] = [parts[1]!, parts[0]!];
  return parts.join('.');
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** Adds `type`'s schema, and every schema it refers to, to `schemas`; answers its name. */
function describe(type: Type, schemas: Record<string, Schema>): string {
  const name = schemaName(type.fullName);
  if (schemas[name]) return name;
  const special = specialSchemas.get(type.fullName);
  if (special) return (schemas[name] = { ...special }), name;
  const properties: Record<string, Schema> = {};
  // Set before the fields are walked: a message that contains itself refers to this entry.
  schemas[name] = { type: 'object', properties };
  addFields(type, properties, schemas);
  return name;
}

function addFields(type: Type, properties: Record<string, Schema>, schemas: Record<string, Schema>): void {
  for (const field of type.fieldsArray) {
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    // JSON flattens Go's embedded structs into their parent, and so does the schema.
    if (nested && isInlined(type, field)) addFields(nested, properties, schemas);
    else properties[field.name] = fieldSchema(field, nested, schemas);
  }
}

function fieldSchema(field: Field, nested: Type | undefined, schemas: Record<string, Schema>): Schema {
  const item = nested ? ref(describe(nested, schemas)) : (scalarSchemas[field.type] ?? {});
  if (field.map) return { type: 'object', additionalProperties: item };
  if (field.repeated) return { type: 'array', items: item };
  // kube-apiserver's form for a struct field: the reference under allOf, so a description may sit beside it.
  return nested ? { allOf: [item] } : item;
}

/** What the top-level fields of every kind hold (TypeMeta is not part of the messages). */
const topLevel: Readonly<Record<string, string>> = {
  apiVersion: 'The group/version of the schema this object follows, e.g. "v1" or "batch/v1".',
  kind: 'The kind of this object, e.g. "Pod"; it names the schema within apiVersion.',
  metadata: 'Standard object metadata: name, namespace, labels and annotations as written; uid, resourceVersion, generation and creationTimestamp as the server sets them.',
  spec: 'The desired state of the object, as its clients write it.',
  status: 'The observed state of the object, as the system reports it.',
};

/** Marks `schema` as the kind `def`'s: apiVersion and kind added, the top-level fields described. */
function asKind(schema: Schema, def: ResourceDefinition): void {
  const properties = (schema.properties ??= {}) as Record<string, Schema>;
  schema.properties = { apiVersion: { type: 'string' }, kind: { type: 'string' }, ...properties };
  for (const [field, description] of Object.entries(topLevel)) {
    const property = (schema.properties as Record<string, Schema>)[field];
    if (property) property.description = description;
  }
  const status = (schema.properties as Record<string, Schema>).status;
  if (status && def.subresources?.includes('status'))
    status.description = `${topLevel.status} Written through the status subresource: a write to the object itself leaves it unchanged.`;
  schema['x-kubernetes-group-version-kind'] = [{ group: def.group, kind: def.kind, version: def.version }];
}

/** A kind stored as given: what every object has, and anything else. */
function openKind(schemas: Record<string, Schema>): Schema {
  const objectMeta = metaMessage('ObjectMeta');
  return {
    type: 'object',
    properties: { metadata: { allOf: [ref(describe(objectMeta, schemas))] } },
    'x-kubernetes-preserve-unknown-fields': true,
  };
}

interface GroupVersionDocument {
  /** `api/v1` or `apis/{group}/{version}`. */
  path: string;
  body: Buffer;
  /** Uppercase hex SHA-512 of the body, as kube-apiserver's `?hash=`. */
  hash: string;
}

/** The GET of one object and of the collection, in every form the resource has. */
function readPaths(path: string, def: ResourceDefinition, schema: string, paths: Record<string, object>): void {
  const gvk = { group: def.group, kind: def.kind, version: def.version };
  const base = `/${path}/${def.namespaced ? 'namespaces/{namespace}/' : ''}${def.plural}`;
  const answer = (ref_: Schema) => ({ '200': { description: 'OK', content: { 'application/json': { schema: ref_ } } } });
  paths[base] = { get: { operationId: `list${def.kind}`, responses: answer({ type: 'object' }), 'x-kubernetes-action': 'list', 'x-kubernetes-group-version-kind': gvk } };
  paths[`${base}/{name}`] = { get: { operationId: `read${def.kind}`, responses: answer(ref(schema)), 'x-kubernetes-action': 'get', 'x-kubernetes-group-version-kind': gvk } };
}

function groupVersionDocument(path: string, defs: readonly ResourceDefinition[], title: string): GroupVersionDocument {
  const schemas: Record<string, Schema> = {};
  const paths: Record<string, object> = {};
  for (const def of defs) {
    const message = messageOf(groupVersion(def), def.kind);
    const name = message ? describe(message, schemas) : schemaName(`${def.group || 'core'}.${def.version}.${def.kind}`);
    if (!message) schemas[name] = openKind(schemas);
    asKind(schemas[name]!, def);
    readPaths(path, def, name, paths);
  }
  const doc = { openapi: '3.0.0', info: { title, version: 'v1' }, paths, components: { schemas } };
  const body = Buffer.from(JSON.stringify(doc));
  return { path, body, hash: createHash('sha512').update(body).digest('hex').toUpperCase() };
}

/** The documents of every group version the definitions serve, built on first use and kept. */
export class OpenApiV3 {
  private documents: Map<string, GroupVersionDocument> | undefined;

  constructor(
    private readonly definitions: readonly ResourceDefinition[],
    private readonly title = 'cluster-api',
  ) {}

  private built(): Map<string, GroupVersionDocument> {
    if (this.documents) return this.documents;
    const byPath = new Map<string, ResourceDefinition[]>();
    for (const def of this.definitions) {
      const path = def.group ? `apis/${def.group}/${def.version}` : `api/${def.version}`;
      byPath.set(path, [...(byPath.get(path) ?? []), def]);
    }
    this.documents = new Map([...byPath].map(([path, defs]) => [path, groupVersionDocument(path, defs, this.title)]));
    return this.documents;
  }

  /** `/openapi/v3`: where each group version's document is, its hash in the URL so clients may cache it. */
  index(): object {
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const doc of this.built().values()) paths[doc.path] = { serverRelativeURL: `/openapi/v3/${doc.path}?hash=${doc.hash}` };
    return { paths };
  }

  /** The document at `/openapi/v3/<path>`, or undefined for a group version not served. */
  document(path: string): GroupVersionDocument | undefined {
    return this.built().get(path);
  }
}
