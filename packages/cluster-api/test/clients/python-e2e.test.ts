/**
 * The Python client's own e2e tests, as Debian's python3-kubernetes ships them
 * (`kubernetes/dynamic/test_client.py`, `test_discovery.py`), run unchanged under pytest against a
 * `serve()` with its node. They import `kubernetes.e2e_test.base`, which Debian leaves out:
 * `python/e2e/` supplies it (the server's kubeconfig as the client Configuration, nothing else) through
 * a pytest plugin that extends the installed package's path. None of the shipped tests needs a
 * container image, so none is skipped. Every test must pass except the ones listed in `KnownGaps`
 * (none today), each asserted to fail still, so that whoever closes a gap removes it from the list.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { tempDir } from '../support/helpers.js';

const python = '/usr/bin/python3';
const harness = fileURLToPath(new URL('./python/e2e/', import.meta.url));
const installed = '/usr/lib/python3/dist-packages/kubernetes';
const suites = ['dynamic/test_client.py', 'dynamic/test_discovery.py'].map((f) => join(installed, f));

/**
 * Tests that fail whatever the server does, with why and the failure each must still show (so that
 * a failure of another kind, or a pass, fails this test and the entry is revisited).
 */
const KnownGaps: Record<string, { why: string; failure: RegExp }> = {
  'TestDiscoverer::test_cache_decoder_resource_and_subresource': {
    why: "python3-kubernetes 22.6's dynamic Resource defines no __eq__, so two Resources decoded apart never compare equal, on any server; "
      + "what the test means (one Deployment kind, decoded from the cache file as discovered) is asserted below",
    failure: /self\.assertTrue\(deploy1 == deploy2\)\nE\s+AssertionError: False is not true/,
  },
};

/**
 * The server as a stock 1.32 is configured for this suite: without the seed's legacy apps/v1beta1 and
 * extensions/v1beta1, since the suite assumes a single Deployment kind (`resources.get(kind='Deployment')`
 * in test_cache_decoder_resource_and_subresource), as on any 1.16+ server. apiextensions.k8s.io/v1beta1
 * stays on: the CRD tests create v1beta1 CustomResourceDefinitions (as against a 1.16-1.21 server).
 */
const RuntimeConfig = 'apps/v1beta1=false,extensions/v1beta1=false';

const pytest = (files: string[], kubeconfig: string, home: string): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    const env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: kubeconfig, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: harness };
    const args = ['-m', 'pytest', '-rA', '-q', '-p', 'no:cacheprovider', '-p', 'e2e_harness', '--rootdir', home, ...files];
    execFile(python, args, { env, cwd: home, timeout: 300_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });

/** `Class::test` → PASSED / FAILED / SKIPPED / ERROR, from pytest's short summary (-rA). */
const outcomes = (output: string): Map<string, string> =>
  new Map([...output.matchAll(/^(PASSED|FAILED|SKIPPED|ERROR) \S*?::(\w+::\w+)/gm)].map((m) => [m[2]!, m[1]!]));

describe.runIf(suites.every((f) => existsSync(f)))('the Python client e2e tests Debian ships, against serve with its node', () => {
  let home: string;
  let served: Served;

  beforeAll(async () => {
    home = tempDir();
    served = await serve(resolveConfig({ port: 0, dataDir: join(home, 'data'), 'runtime-config': RuntimeConfig }), () => {});
  });
  afterAll(async () => {
    await served?.server.close();
  });

  it('pass, but for the known gaps', async () => {
    const run = await pytest(suites, served.kubeconfig!, home);
    const found = outcomes(run.output);
    expect(found.size, run.output).toBeGreaterThanOrEqual(14);
    for (const [test, { why }] of Object.entries(KnownGaps)) process.stdout.write(`known gap: ${test}: ${why}\n`);
    const wrong = [...found].filter(([test, outcome]) => (test in KnownGaps ? outcome !== 'FAILED' : outcome !== 'PASSED'));
    expect(wrong, run.output).toEqual([]);
    for (const { failure } of Object.values(KnownGaps)) expect(run.output).toMatch(failure);
  }, 320_000);

  it("serves one Deployment kind, the same decoded from the client's discovery cache as discovered", async () => {
    const script = [
      'import json',
      'from kubernetes.e2e_test import base',
      'from kubernetes.client import api_client',
      'from kubernetes.dynamic import DynamicClient',
      'config = base.get_e2e_configuration()',
      'DynamicClient(api_client.ApiClient(configuration=config)).resources.invalidate_cache()',
      "found = [DynamicClient(api_client.ApiClient(configuration=config)).resources.get(kind='Deployment') for _ in range(2)]",
      "print(json.dumps([[r.to_dict(), r.status.to_dict()] for r in found]))",
    ].join('\n');
    const out = await new Promise<string>((resolve, reject) => {
      const env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: served.kubeconfig!, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: harness };
      execFile(python, ['-c', `import e2e_harness\n${script}`], { env, cwd: home, timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
    });
    // The configuration module prints the server it runs against first.
    const [[first, firstStatus], [second, secondStatus]] = JSON.parse(out.trim().split('\n').pop()!);
    expect(first).toMatchObject({ group: 'apps', api_version: 'v1', kind: 'Deployment', name: 'deployments' });
    expect(second).toEqual(first);
    expect(secondStatus).toEqual(firstStatus);
    expect(firstStatus).toMatchObject({ name: 'deployments/status', subresource: 'status' });
  }, 120_000);
});
