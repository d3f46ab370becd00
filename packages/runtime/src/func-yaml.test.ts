import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFuncYaml, FuncYamlError, funcSchemaValidator, parseFuncYaml, readValidFuncYaml } from './func-yaml.js';

function dirWith(yaml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'func-yaml-'));
  if (yaml !== undefined) writeFileSync(join(dir, 'func.yaml'), yaml);
  return dir;
}

describe('parseFuncYaml', () => {
  it('returns undefined when there is no func.yaml', () => {
    expect(parseFuncYaml(dirWith())).toBeUndefined();
  });

  it('parses the document of a directory, or of the file named (faas-js-runtime\'s `config`)', () => {
    const dir = dirWith('name: fn\ndeploy:\n  healthEndpoints:\n    liveness: /alive\n');
    const doc = { name: 'fn', deploy: { healthEndpoints: { liveness: '/alive' } } };
    expect(parseFuncYaml(dir)).toEqual({ file: join(dir, 'func.yaml'), doc });
    expect(parseFuncYaml(join(dir, 'func.yaml'))?.doc).toEqual(doc);
  });

  it('names the file and the line of a YAML syntax error', () => {
    const dir = dirWith('name: fn\n  bad: [unclosed\n');
    expect(() => parseFuncYaml(dir)).toThrow(FuncYamlError);
    expect(() => parseFuncYaml(dir)).toThrow(new RegExp(`${join(dir, 'func.yaml')} is not valid YAML: .*at line 1, column 7`));
  });
});

describe('checking against a validator', () => {
  it('reports every problem in one paragraph naming the file', () => {
    const validate = (doc: unknown) => ((doc as { name?: unknown }).name ? [] : ['name is required', 'runtime is required']);
    expect(checkFuncYaml(parseFuncYaml(dirWith('name: ok\n')), validate)).toEqual({ name: 'ok' });
    expect(() => checkFuncYaml(parseFuncYaml(dirWith('runtime: node\n')), validate)).toThrow(/func\.yaml does not match func\.schema\.json: name is required; runtime is required\. Fix those fields/);
  });

  it('readValidFuncYaml checks against func.schema.json; nothing to check without a func.yaml', async () => {
    expect(await readValidFuncYaml(dirWith())).toBeUndefined();
    expect(await readValidFuncYaml(dirWith('specVersion: 0.36.0\nname: ok\n'))).toEqual({ specVersion: '0.36.0', name: 'ok' });
    await expect(readValidFuncYaml(dirWith('name: Not_A_Label\n'))).rejects.toThrow(/does not match func\.schema\.json: \/: missing required field "specVersion"; \/name: must match pattern/);
  });

  it('the schema validator is one module, imported once', async () => {
    expect(await funcSchemaValidator()).toBe(await funcSchemaValidator());
  });
});
