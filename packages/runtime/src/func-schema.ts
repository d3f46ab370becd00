/**
 * func.yaml validation against func.schema.json. The validator is ajv standalone code generated at
 * build time (scripts/func-schema.mjs → func-schema.generated.ts), imported only when a project has
 * a func.yaml: no schema compilation and no ajv at start-up, and nothing at all without a func.yaml.
 */
import type { FuncYamlValidator } from './func-yaml.js';

/** The fields of an ajv error object this module reads. */
interface SchemaError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

type GeneratedValidator = ((doc: unknown) => boolean) & { errors?: SchemaError[] | null };

const MAX_PROBLEMS = 5;

function valueAt(doc: unknown, pointer: string): unknown {
  let cur = doc;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

// Env values may hold secrets: a bad one is named by its path, never echoed.
function shown(doc: unknown, pointer: string): string {
  if (/\/(?:build)?[eE]nvs\//.test(pointer)) return '';
  const v = valueAt(doc, pointer);
  if (v === undefined || (typeof v === 'object' && v !== null)) return '';
  const text = JSON.stringify(v);
  return ` (got ${text.length > 60 ? `${text.slice(0, 57)}…` : text})`;
}

function describe(e: SchemaError, doc: unknown): string {
  const at = e.instancePath || '/';
  switch (e.keyword) {
    case 'additionalProperties': return `${at}: unknown field "${String(e.params.additionalProperty)}"`;
    case 'required': return `${at}: missing required field "${String(e.params.missingProperty)}"`;
    case 'enum': return `${at}: must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}${shown(doc, e.instancePath)}`;
    case 'oneOf': return `${at}: must set exactly one of the alternatives the schema allows`;
    default: return `${at}: ${e.message ?? `fails ${e.keyword}`}${shown(doc, e.instancePath)}`;
  }
}

/** One line per bad field, JSON-pointer path first; the alternatives inside a oneOf are folded into it. */
export function describeSchemaErrors(errors: readonly SchemaError[], doc: unknown): string[] {
  const relevant = errors.filter((e) => !/\/oneOf\/\d+\//.test(e.schemaPath));
  const lines = [...new Set(relevant.map((e) => describe(e, doc)))];
  return lines.length > MAX_PROBLEMS ? [...lines.slice(0, MAX_PROBLEMS), `and ${lines.length - MAX_PROBLEMS} more`] : lines;
}

/** The func.schema.json validator, loaded on first call. */
export async function loadFuncYamlValidator(): Promise<FuncYamlValidator> {
  const { validate } = (await import('./func-schema.generated.js')) as { validate: GeneratedValidator };
  return (doc) => (validate(doc) ? [] : describeSchemaErrors(validate.errors ?? [], doc));
}
