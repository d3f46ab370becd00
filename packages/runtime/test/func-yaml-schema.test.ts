/**
 * func.yaml is validated against the repo's func.schema.json by the generated validator: at start-up
 * through the CLI and start({ dir }), with the JSON path of the bad field in one paragraph.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error the build script is plain JavaScript without declarations
import { generateValidator, generatedFile, rootSchemaFile } from '../scripts/func-schema.mjs';
import { loadFuncYamlValidator } from '../src/func-schema.js';
import { FuncYamlError, start, stop } from '../src/index.js';
import { fixture, runCli, runCliToExit } from './helpers/cli.js';

const validate = await loadFuncYamlValidator();
const base = 'specVersion: 0.36.0\nname: hello\n';
const dirs: string[] = [];

function project(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'func-yaml-schema-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'func.yaml'), yaml);
  return dir;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the generated func.yaml validator', () => {
  it('is generated from the current func.schema.json (run `npm run generate -w @func/runtime` when this fails)', () => {
    const fresh = (generateValidator as (s: string) => string)(readFileSync(rootSchemaFile as string, 'utf8'));
    expect(readFileSync(generatedFile as string, 'utf8')).toBe(fresh);
  });

  it('accepts a Knative func.yaml with run.envs, volumes and deploy options', () => {
    const doc = parse(`${base}runtime: typescript\nrun:\n  envs:\n    - name: A\n      value: b\n    - value: '{{ secret:s }}'\n  volumes:\n    - secret: tls\n      path: /etc/tls\ndeploy:\n  options:\n    scale:\n      min: 0\n      max: 3\n`);
    expect(validate(doc)).toEqual([]);
  });

  it.each([
    ['a health path without a slash', 'deploy:\n  healthEndpoints:\n    liveness: health', '/deploy/healthEndpoints/liveness: must match pattern "^/[^\\s?#]*$" (got "health")'],
    ['an unknown top-level field', 'logLevel: debug', '/: unknown field "logLevel"'],
    ['an unknown invoke hint', 'invoke: grpc', '/invoke: must be one of "http", "cloudevent" (got "grpc")'],
    ['a name that is not a DNS label', 'name: Hello_World', '/name: must match pattern "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" (got "Hello_World")'],
    ['a name over 63 characters', `name: ${'a'.repeat(64)}`, '/name: must NOT have more than 63 characters'],
    ['a volume with two sources', 'run:\n  volumes:\n    - secret: a\n      configMap: b\n      path: /x', '/run/volumes/0: must set exactly one of the alternatives the schema allows'],
    ['a negative scale', 'deploy:\n  options:\n    scale:\n      min: -1', '/deploy/options/scale/min: must be >= 0 (got -1)'],
  ])('rejects %s, naming the JSON path', (_what, fragment, problem) => {
    const doc = { ...(parse(base) as object), ...(parse(fragment) as object) };
    expect(validate(doc).join('\n')).toContain(problem);
  });

  it('reports a missing required field', () => {
    expect(validate({ name: 'x' })).toEqual(['/: missing required field "specVersion"']);
    expect(validate('just a string')).toEqual(['/: must be object (got "just a string")']);
  });

  it('never echoes an env value, which may be a secret', () => {
    const problems = validate(parse(`${base}run:\n  envs:\n    - name: TOKEN\n      value: 12345678\n`));
    expect(problems).toEqual(['/run/envs/0/value: must be string']);
  });

  it('caps a long list of problems', () => {
    const doc = { ...(parse(base) as object), a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7 };
    const problems = validate(doc);
    expect(problems).toHaveLength(6);
    expect(problems[5]).toBe('and 2 more');
  });
});

describe('func-runtime with an invalid func.yaml', () => {
  it('exits 1 with one paragraph naming the file and the field', async () => {
    const r = await runCliToExit([fixture('yaml-invalid'), '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`${join(fixture('yaml-invalid'), 'func.yaml')} does not match func.schema.json: /deploy/healthEndpoints/liveness: must match pattern`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('serves a valid one, with its health paths', async () => {
    const r = await runCli([fixture('yaml-health')]);
    try {
      expect((await fetch(`${r.url}/probe/live`)).status).toBe(200);
    } finally {
      await r.stop();
    }
  });
});

describe('start({ dir })', () => {
  it('rejects an invalid func.yaml with a FuncYamlError naming the field, and listens on nothing', async () => {
    const dir = project(`${base}deploy:\n  healthEndpoints:\n    readiness: ready\n`);
    const err = await start(() => 'x', { port: 0, dir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FuncYamlError);
    expect((err as Error).message).toContain('/deploy/healthEndpoints/readiness');
  });

  it('rejects malformed YAML', async () => {
    const dir = project('name: [unclosed\n');
    await expect(start(() => 'x', { port: 0, dir })).rejects.toThrow(/is not valid YAML/);
  });

  it('applies a valid func.yaml: health paths from deploy.healthEndpoints', async () => {
    const dir = project(`${base}deploy:\n  healthEndpoints:\n    liveness: /alive\n`);
    const server = await start(() => 'x', { port: 0, host: '127.0.0.1', dir });
    try {
      const { port } = server.address() as { port: number };
      expect(await (await fetch(`http://127.0.0.1:${port}/alive`)).text()).toBe('OK');
    } finally {
      await stop(server);
    }
  });

  it('works without a func.yaml in the directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'func-yaml-none-'));
    dirs.push(dir);
    const server = await start(() => 'no yaml', { port: 0, host: '127.0.0.1', dir });
    try {
      const { port } = server.address() as { port: number };
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('no yaml');
    } finally {
      await stop(server);
    }
  });
});
