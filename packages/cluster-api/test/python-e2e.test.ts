/**
 * The Python client's own e2e tests, as Debian's python3-kubernetes ships them
 * (`kubernetes/dynamic/test_client.py`, `test_discovery.py`), run unchanged under pytest against a
 * `serve()` with its node. They import `kubernetes.e2e_test.base`, which Debian leaves out:
 * `python/e2e/` supplies it (the server's kubeconfig as the client Configuration, nothing else) through
 * a pytest plugin that extends the installed package's path.
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

const pytest = (files: string[], kubeconfig: string, home: string): Promise<{ code: number; output: string }> =>
  new Promise((resolve) => {
    const env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: kubeconfig, PYTHONDONTWRITEBYTECODE: '1', PYTHONPATH: harness };
    const args = ['-m', 'pytest', '-rs', '-q', '-p', 'no:cacheprovider', '-p', 'e2e_harness', '--rootdir', home, ...files];
    execFile(python, args, { env, cwd: home, timeout: 300_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });

describe.runIf(suites.every((f) => existsSync(f)))('the Python client e2e tests Debian ships, against serve', () => {
  let home: string;
  let served: Served;

  beforeAll(async () => {
    home = tempDir();
    served = await serve(resolveConfig({ port: 0, dataDir: join(home, 'data') }), () => {});
  });
  afterAll(async () => {
    await served?.server.close();
  });

  it('pass', async () => {
    const run = await pytest(suites, served.kubeconfig!, home);
    expect(run.output).toMatch(/\d+ passed/);
    expect(run.code, run.output).toBe(0);
  }, 320_000);
});
