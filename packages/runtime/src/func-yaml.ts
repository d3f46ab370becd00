/**
 * Reads func.yaml. Validation against func.schema.json plugs in through setFuncYamlValidator(),
 * so this module stays free of a schema engine on the start-up path; readValidFuncYaml() plugs in
 * the schema's generated validator (func-schema.ts) when a project has a func.yaml.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';

// Loaded on first use: most functions have no func.yaml at run time, and start-up time counts.
const requireLazy = createRequire(import.meta.url);

/** Returns a list of human-readable problems; empty means valid. */
export type FuncYamlValidator = (doc: unknown) => string[];

let validator: FuncYamlValidator | undefined;

export function setFuncYamlValidator(v: FuncYamlValidator | undefined): void {
  validator = v;
}

export class FuncYamlError extends Error {
  override name = 'FuncYamlError';
}

/** The parsed func.yaml of a project directory, or undefined when it has none. */
export function readFuncYaml(dir: string): unknown {
  const file = join(dir, 'func.yaml');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FuncYamlError(`Cannot read ${file}: ${(err as Error).message}.`);
  }
  let doc: unknown;
  try {
    doc = (requireLazy('yaml') as typeof import('yaml')).parse(text);
  } catch (err) {
    throw new FuncYamlError(`${file} is not valid YAML: ${(err as Error).message.split('\n')[0]}. Fix the YAML syntax at that line.`);
  }
  const problems = validator?.(doc) ?? [];
  if (problems.length > 0) {
    throw new FuncYamlError(`${file} does not match func.schema.json: ${problems.join('; ')}. Fix ${problems.length === 1 ? 'that field' : 'those fields'} (the path is a JSON pointer into the file), then run again.`);
  }
  return doc;
}

/** readFuncYaml() with func.schema.json validation, unless a validator is plugged in already. */
export async function readValidFuncYaml(dir: string): Promise<unknown> {
  if (validator === undefined && existsSync(join(dir, 'func.yaml'))) {
    const { loadFuncYamlValidator } = await import('./func-schema.js');
    validator ??= await loadFuncYamlValidator();
  }
  return readFuncYaml(dir);
}
