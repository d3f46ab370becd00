/**
 * The Python client as a real client: Debian's python3-kubernetes under /usr/bin/python3 (the
 * pyenv python on PATH has no such module). Every `python/test_*.py` runs under pytest against one
 * `serve()` per backend — TLS with the generated CA and admin token, the kubeconfig it writes — on a
 * real SQLite file and on a real etcd. Each Python test works in a namespace of its own (conftest.py),
 * so the files share a server without seeing each other. Those servers run no node (the files pin
 * the API itself); `python/test_node*.py` run against one that does (its embedded agent and scheduler).
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { tempDir } from '../support/helpers.js';

const python = '/usr/bin/python3';
const dir = fileURLToPath(new URL('./python/', import.meta.url));
const all = readdirSync(dir).filter((f) => /^test_.*\.py$/.test(f)).sort();
const nodeFiles = all.filter((f) => f.startsWith('test_node'));
const files = all.filter((f) => !nodeFiles.includes(f));

interface Run {
  code: number;
  output: string;
}

const pytest = (file: string, kubeconfig: string, home: string): Promise<Run> =>
  new Promise((resolve) => {
    const env = { PATH: process.env.PATH, HOME: home, KUBECONFIG: kubeconfig, PYTHONDONTWRITEBYTECODE: '1' };
    const args = ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--rootdir', dir, join(dir, file)];
    execFile(python, args, { env, timeout: 180_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, output: `${stdout}${stderr}` });
    });
  });

describe.each(['sqlite', 'etcd'] as const)('the Python client against cluster-api on %s', (backend) => {
  let home: string;
  let etcd: EtcdCluster | undefined;
  let served: Served;

  beforeAll(async () => {
    home = tempDir();
    if (backend === 'etcd') etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
    const storage = etcd ? etcd.url : `sqlite:${join(home, 'data', 'state.db')}`;
    served = await serve(resolveConfig({ port: 0, dataDir: join(home, 'data'), storage, disableAgent: true, disableScheduler: true }), () => {});
  });
  afterAll(async () => {
    await served?.server.close();
    await etcd?.stop();
  });

  it.each(files)('%s passes', async (file) => {
    const run = await pytest(file, served.kubeconfig!, home);
    expect(run.code, run.output).toBe(0);
  }, 200_000);
});

describe('the Python client against a cluster-api with its node (sqlite)', () => {
  let home: string;
  let served: Served;

  beforeAll(async () => {
    home = tempDir();
    served = await serve(resolveConfig({ port: 0, dataDir: join(home, 'data') }), () => {});
  });
  afterAll(async () => {
    await served?.server.close();
  });

  it.each(nodeFiles)('%s passes', async (file) => {
    const run = await pytest(file, served.kubeconfig!, home);
    expect(run.code, run.output).toBe(0);
  }, 200_000);
});
