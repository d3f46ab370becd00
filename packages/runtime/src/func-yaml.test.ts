import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FuncYamlError, readFuncYaml, readValidFuncYaml, setFuncYamlValidator } from './func-yaml.js';

function dirWith(yaml?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'func-yaml-'));
  if (yaml !== undefined) writeFileSync(join(dir, 'func.yaml'), yaml);
  return dir;
}

afterEach(() => setFuncYamlValidator(undefined));

describe('readFuncYaml', () => {
  it('returns undefined when there is no func.yaml', () => {
    expect(readFuncYaml(dirWith())).toBeUndefined();
  });

  it('parses the document', () => {
    const doc = readFuncYaml(dirWith('name: fn\ndeploy:\n  healthEndpoints:\n    liveness: /alive\n'));
    expect(doc).toEqual({ name: 'fn', deploy: { healthEndpoints: { liveness: '/alive' } } });
  });

  it('names the file and the line of a YAML syntax error', () => {
    const dir = dirWith('name: fn\n  bad: [unclosed\n');
    expect(() => readFuncYaml(dir)).toThrow(FuncYamlError);
    expect(() => readFuncYaml(dir)).toThrow(new RegExp(`${join(dir, 'func.yaml')} is not valid YAML: .*at line 1, column 7`));
  });

  it('runs a plugged-in validator and reports its problems', () => {
    setFuncYamlValidator((doc) => ((doc as { name?: unknown }).name ? [] : ['name is required', 'runtime is required']));
    expect(readFuncYaml(dirWith('name: ok\n'))).toEqual({ name: 'ok' });
    expect(() => readFuncYaml(dirWith('runtime: node\n'))).toThrow(/func\.yaml does not match func\.schema\.json: name is required; runtime is required\. Fix those fields/);
  });

  it('readValidFuncYaml loads the schema validator only for a project that has a func.yaml', async () => {
    const invalid = dirWith('name: Not_A_Label\n');
    expect(await readValidFuncYaml(dirWith())).toBeUndefined();
    // Nothing was plugged in: the sync reader still accepts a document the schema rejects.
    expect(readFuncYaml(invalid)).toEqual({ name: 'Not_A_Label' });
    expect(await readValidFuncYaml(dirWith('specVersion: 0.36.0\nname: ok\n'))).toEqual({ specVersion: '0.36.0', name: 'ok' });
    expect(() => readFuncYaml(invalid)).toThrow(/does not match func\.schema\.json: \/: missing required field "specVersion"; \/name: must match pattern/);
  });

  it('readValidFuncYaml keeps a validator plugged in by the caller', async () => {
    setFuncYamlValidator(() => ['custom rule']);
    await expect(readValidFuncYaml(dirWith('specVersion: 0.36.0\nname: ok\n'))).rejects.toThrow(/custom rule/);
  });
});
