/** func.yaml run.envs as environment defaults of the function's process: the real env wins. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { start, stop } from '../src/index.js';
import { applyEnvDefaults, funcYamlEnvs } from '../src/run-envs.js';
import { fixture, runCli, runCliToExit } from './helpers/cli.js';

describe('funcYamlEnvs / applyEnvDefaults', () => {
  it('takes name/value pairs, resolves {{ env:NAME }}, skips cluster-only references and malformed entries', () => {
    const doc = { run: { envs: [
      { name: 'A', value: 'a' },
      { name: 'B', value: '{{ env:LOCAL_B }}' },
      { name: 'C', value: '{{ env:UNSET_C }}' },
      { name: 'D', value: '{{ secret:s:key }}' },
      { value: '{{ configMap:cm }}' },
      { name: 'E' },
      null,
      'junk',
    ] } };
    expect([...funcYamlEnvs(doc, { LOCAL_B: 'b' })]).toEqual([['A', 'a'], ['B', 'b']]);
    expect(funcYamlEnvs(undefined).size).toBe(0);
    expect(funcYamlEnvs({ run: { envs: 'not a list' } }).size).toBe(0);
  });

  it('never overrides a variable the environment sets; an empty one counts as unset, as for options', () => {
    const env: Record<string, string | undefined> = { A: 'real', EMPTY: '' };
    const set = applyEnvDefaults(env, new Map([['A', 'yaml'], ['EMPTY', 'yaml'], ['NEW', 'yaml']]));
    expect(env).toEqual({ A: 'real', EMPTY: 'yaml', NEW: 'yaml' });
    expect(set).toEqual(['EMPTY', 'NEW']);
  });
});

describe('func-runtime with run.envs', () => {
  it('gives the function its variables before its module loads, and FUNC_* options take effect', async () => {
    const r = await runCli([fixture('yaml-envs')], { FUNC_LOG_LEVEL: '' });
    try {
      const res = await fetch(r.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a": 1}' });
      expect(await res.json()).toEqual({ greetingAtImport: 'hello from func.yaml', greeting: 'hello from func.yaml', logLevel: 'error', raw: '{"a": 1}' });
    } finally {
      await r.stop();
    }
    expect(r.stdout()).not.toMatch(/"level":30/);
  });

  it('lets the real environment win', async () => {
    const r = await runCli([fixture('yaml-envs')], { GREETING: 'from the shell', FUNC_INCLUDE_RAW: 'false' });
    try {
      const res = await fetch(r.url, { method: 'POST', body: 'x' });
      expect(await res.json()).toMatchObject({ greetingAtImport: 'from the shell', raw: null, logLevel: 'info' });
    } finally {
      await r.stop();
    }
  });

  it('rejects a bad option value from run.envs, naming func.yaml', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-envs-'));
    try {
      writeFileSync(join(dir, 'func.yaml'), 'specVersion: 0.36.0\nname: bad-port\nrun:\n  envs:\n    - name: FUNC_BODY_LIMIT\n      value: lots\n');
      writeFileSync(join(dir, 'index.mjs'), 'export const handle = () => "x";\n');
      const r = await runCliToExit([dir], { FUNC_BODY_LIMIT: '' });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('func-runtime: func.yaml run.envs FUNC_BODY_LIMIT must be an integer ≥ 0, got "lots"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('start({ dir }) with run.envs', () => {
  const added: string[] = [];
  afterEach(() => {
    for (const name of added.splice(0)) delete process.env[name];
  });

  it('sets process.env defaults and options from them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-envs-start-'));
    writeFileSync(join(dir, 'func.yaml'), 'specVersion: 0.36.0\nname: s\nrun:\n  envs:\n    - name: RUN_ENVS_TEST_VALUE\n      value: v1\n    - name: READINESS_URL\n      value: /ready-from-yaml\n');
    added.push('RUN_ENVS_TEST_VALUE', 'READINESS_URL');
    const server = await start(() => process.env.RUN_ENVS_TEST_VALUE, { port: 0, host: '127.0.0.1', dir });
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      expect(await (await fetch(`${base}/`)).text()).toBe('v1');
      expect(await (await fetch(`${base}/ready-from-yaml`)).text()).toBe('OK');
    } finally {
      await stop(server);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
