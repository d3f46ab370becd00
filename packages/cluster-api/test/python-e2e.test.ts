/**
 * The Python client's own e2e tests, as Debian's python3-kubernetes ships them
 * (`kubernetes/dynamic/test_client.py`, `test_discovery.py`), run unchanged under pytest against a
 * `serve()` with its node. They import `kubernetes.e2e_test.base`, which Debian leaves out:
 * `python/e2e/` supplies it (the server's kubeconfig as the client Configuration, nothing else) through
 * a pytest plugin that extends the installed package's path. None of the shipped tests needs a
 * container image, so none is skipped. Every test must pass except the ones listed in `KnownGaps`,
 * which fail for what the server does not serve (outside the aggregation layer); each is asserted to
 * fail still, so that whoever closes a gap removes it from the list.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../src/config.js';
import { serve, type Served } from '../src/server.js';
import { tempDir } from './helpers.js';

const python = '/usr/bin/python3';
const harness = fileURLToPath(new URL('./python/e2e/', import.meta.url));
const installed = '/usr/lib/python3/dist-packages/kubernetes';
const suites = ['dynamic/test_client.py', 'dynamic/test_discovery.py'].map((f) => join(installed, f));

const V1beta1Crds = 'apiextensions.k8s.io/v1beta1 CustomResourceDefinition is not served (removed in Kubernetes 1.22; the shipped test still uses it)';
const KnownGaps: Record<string, string> = {
  'TestDynamicClient::test_cluster_custom_resources': V1beta1Crds,
  'TestDynamicClient::test_namespaced_custom_resources': V1beta1Crds,
  'TestDynamicClient::test_async_namespaced_custom_resources': V1beta1Crds,
  'TestDiscoverer::test_cache_decoder_resource_and_subresource':
    "`resources.get(kind='Deployment')` finds apps/v1, apps/v1beta1 and extensions/v1beta1 deployments (the legacy group versions the server keeps); a 1.32 server serves only apps/v1",
};

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
    served = await serve(resolveConfig({ port: 0, dataDir: join(home, 'data') }), () => {});
  });
  afterAll(async () => {
    await served?.server.close();
  });

  it('pass, but for the known gaps', async () => {
    const run = await pytest(suites, served.kubeconfig!, home);
    const found = outcomes(run.output);
    expect(found.size, run.output).toBeGreaterThanOrEqual(14);
    for (const [test, why] of Object.entries(KnownGaps)) process.stdout.write(`known gap: ${test}: ${why}\n`);
    const wrong = [...found].filter(([test, outcome]) => (test in KnownGaps ? outcome !== 'FAILED' : outcome !== 'PASSED'));
    expect(wrong, run.output).toEqual([]);
  }, 320_000);
});
