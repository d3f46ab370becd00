/**
 * Reads func.yaml. Parsing and checking are two steps, because what to do with a document that
 * breaks func.schema.json depends on options the document itself may set (run.envs
 * FUNC_COMPAT): the spec's runtime refuses it, compatibility mode warns and reads it anyway, as
 * faas-js-runtime read its func.yaml unchecked. The schema's validator is generated code
 * (func-schema.ts), imported on first use: a project without a func.yaml never loads it.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

// Loaded on first use: most functions have no func.yaml at run time, and start-up time counts.
const requireLazy = createRequire(import.meta.url);

/** Returns a list of human-readable problems; empty means valid. */
export type FuncYamlValidator = (doc: unknown) => string[];

export class FuncYamlError extends Error {
  override name = 'FuncYamlError';
}

/** A parsed func.yaml and the file it came from. */
export interface FuncYaml {
  file: string;
  doc: unknown;
}

/** The func.yaml of a project directory, or the file itself when `location` names one (faas-js-runtime's `config`). */
export function funcYamlFile(location: string): string {
  return statSync(location, { throwIfNoEntry: false })?.isFile() ? location : join(location, 'func.yaml');
}

/** The parsed func.yaml at `location`, or undefined when there is none. Not checked against the schema. */
export function parseFuncYaml(location: string): FuncYaml | undefined {
  const file = funcYamlFile(location);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FuncYamlError(`Cannot read ${file}: ${(err as Error).message}.`);
  }
  try {
    return { file, doc: (requireLazy('yaml') as typeof import('yaml')).parse(text) };
  } catch (err) {
    throw new FuncYamlError(`${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}. Fix the YAML syntax at that line.`);
  }
}

/** The one paragraph that names the file and each bad field; undefined when `validate` finds nothing. */
export function funcYamlProblem(yaml: FuncYaml, validate: FuncYamlValidator): string | undefined {
  const problems = validate(yaml.doc);
  if (problems.length === 0) return undefined;
  return `${yaml.file} does not match func.schema.json: ${problems.join('; ')}. Fix ${problems.length === 1 ? 'that field' : 'those fields'} (the path is a JSON pointer into the file), then run again.`;
}

/** Throws FuncYamlError when the document breaks the schema; returns the document. */
export function checkFuncYaml(yaml: FuncYaml | undefined, validate: FuncYamlValidator): unknown {
  if (yaml === undefined) return undefined;
  const problem = funcYamlProblem(yaml, validate);
  if (problem !== undefined) throw new FuncYamlError(problem);
  return yaml.doc;
}

let schemaValidator: Promise<FuncYamlValidator> | undefined;

/** func.schema.json's validator, imported once. */
export function funcSchemaValidator(): Promise<FuncYamlValidator> {
  return (schemaValidator ??= import('./func-schema.js').then((m) => m.loadFuncYamlValidator()));
}

/** The func.yaml at `location` checked against func.schema.json; undefined when there is none. */
export async function readValidFuncYaml(location: string): Promise<unknown> {
  const yaml = parseFuncYaml(location);
  return yaml === undefined ? undefined : checkFuncYaml(yaml, await funcSchemaValidator());
}
