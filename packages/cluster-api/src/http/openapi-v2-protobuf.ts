/**
 * The protobuf form of /openapi/v2: gnostic's openapi_v2.Document, which client-go's OpenAPISchema()
 * asks for (and, on 406, does not fall back to JSON: it tries a path removed in Kubernetes 1.14).
 * Vendor extensions, defaults, enums and examples travel as YAML text (JSON is YAML), as gnostic
 * compiles them and kubectl reads them.
 */
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { protoDir } from '../protobuf/schema.js';
import type { Schema } from './openapi.js';
import type { OpenApiV2Document } from './openapi-v2.js';

let documentType: protobuf.Type | undefined;

function documentMessage(): protobuf.Type {
  if (documentType) return documentType;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => join(protoDir, target);
  root.loadSync('github.com/google/gnostic/openapiv2/OpenAPIv2.proto', { keepCase: true });
  return (documentType = root.resolveAll().lookupType('openapi.v2.Document'));
}

type Message = Record<string, unknown>;

const yaml = (value: unknown): Message => ({ yaml: JSON.stringify(value) });

/** JSON Schema keywords with a field of their own, by their JSON name. */
const scalarFields: Readonly<Record<string, string>> = {
  format: 'format', title: 'title', description: 'description', pattern: 'pattern',
  multipleOf: 'multiple_of', maximum: 'maximum', exclusiveMaximum: 'exclusive_maximum', minimum: 'minimum', exclusiveMinimum: 'exclusive_minimum',
  maxLength: 'max_length', minLength: 'min_length', maxItems: 'max_items', minItems: 'min_items', uniqueItems: 'unique_items',
  maxProperties: 'max_properties', minProperties: 'min_properties',
};

const named = (entries: Record<string, Schema>): Message[] => Object.entries(entries).map(([name, value]) => ({ name, value: schemaMessage(value) }));

function schemaMessage(schema: Schema): Message {
  const out: Message = {};
  const extensions: Message[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (scalarFields[key]) out[scalarFields[key]] = value;
    else if (key === '$ref') out._ref = value;
    else if (key === 'type') out.type = { value: Array.isArray(value) ? value : [value] };
    else if (key === 'items') out.items = { schema: (Array.isArray(value) ? value : [value]).map((v) => schemaMessage(v as Schema)) };
    else if (key === 'properties') out.properties = { additional_properties: named(value as Record<string, Schema>) };
    else if (key === 'additionalProperties') out.additional_properties = typeof value === 'boolean' ? { boolean: value } : { schema: schemaMessage(value as Schema) };
    else if (key === 'allOf') out.all_of = (value as Schema[]).map(schemaMessage);
    else if (key === 'required') out.required = value;
    else if (key === 'enum') out.enum = (value as unknown[]).map(yaml);
    else if (key === 'default' || key === 'example') out[key] = yaml(value);
    else if (key.startsWith('x-')) extensions.push({ name: key, value: yaml(value) });
  }
  if (extensions.length) out.vendor_extension = extensions;
  return out;
}

function operationMessage(operation: Record<string, unknown>): Message {
  const extensions = Object.entries(operation).filter(([k]) => k.startsWith('x-')).map(([name, value]) => ({ name, value: yaml(value) }));
  const responses = operation.responses as Record<string, { description: string; schema: Schema }>;
  return {
    operation_id: operation.operationId,
    produces: operation.produces,
    responses: { response_code: Object.entries(responses).map(([name, r]) => ({ name, value: { response: { description: r.description, schema: { schema: schemaMessage(r.schema) } } } })) },
    vendor_extension: extensions,
  };
}

export function encodeOpenApiV2(doc: OpenApiV2Document): Buffer {
  const type = documentMessage();
  const message = {
    swagger: doc.swagger,
    info: doc.info,
    paths: { path: Object.entries(doc.paths).map(([name, item]) => ({ name, value: { get: operationMessage(item.get) } })) },
    definitions: { additional_properties: named(doc.definitions) },
  };
  return Buffer.from(type.encode(type.fromObject(message)).finish());
}

/** For clients and tests: the protobuf form back as the decoded message (snake_case fields, as gnostic's). */
export function decodeOpenApiV2(bytes: Uint8Array): Message {
  const type = documentMessage();
  return type.toObject(type.decode(bytes), { longs: Number, defaults: false, arrays: true }) as Message;
}
