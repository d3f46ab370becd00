/**
 * `cluster-api serve --container-runtime oci` killed (SIGKILL) and started again on its data
 * directory: its embedded node agent adopts the function pod it left running (same containerID,
 * restartCount 0), which still answers on its pod IP.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { functionImage, probeFunction } from '../support/node-fixtures.js';
import { ociMissing } from '../support/oci-fixtures.js';
import { runKubectl, tempDir } from '../support/helpers.js';
import { cli, haveKubectl, kubectlBin } from '../serve/process.js';
import { until } from '../../testing/src/poll.js';

const dir = tempDir();
const data = join(dir, 'data');
let serve: ChildProcess | undefined;

/** serve on `data`, resolved once it listens. */
function startServe(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', data, '--container-runtime', 'oci', '--no-broker'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      if (/"msg":"listening"/.test(log)) resolve(child);
    });
    child.once('exit', (code, signal) => reject(new Error(`serve exited (${code ?? signal}): ${log}`)));
  });
}

const exited = (child: ChildProcess) => (child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve())));
const kubectl = async (...args: string[]) => {
  const r = await runKubectl(kubectlBin, { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(data, 'kubeconfig.yaml'), KUBECACHEDIR: join(dir, 'cache') }, args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

afterAll(async () => {
  if (serve) {
    serve.kill('SIGTERM');
    await exited(serve);
  }
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.skipIf(ociMissing || !haveKubectl)(`serve --container-runtime oci, restarted${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  it('adopts the function pod its node left running', async () => {
    serve = await startServe();
    await functionImage(join(data, 'images'), probeFunction, 'probe:v1');
    await kubectl('run', 'fn', '--image=probe:v1', '--port=8080');
    const ready = () => kubectl('get', 'pod', 'fn', '-o', 'jsonpath={.status.containerStatuses[0].ready} {.status.containerStatuses[0].containerID} {.status.containerStatuses[0].restartCount} {.status.podIP}');
    const before = await until('fn Ready', async () => {
      const out = await ready();
      return out.startsWith('true ') && out;
    }, { timeoutMs: 90_000 });
    serve.kill('SIGKILL');
    await exited(serve);
    serve = await startServe();
    const after = await until('fn Ready again', async () => {
      const out = await ready();
      return out.startsWith('true ') && out;
    }, { timeoutMs: 60_000 });
    expect(after).toBe(before);
    const ip = before.split(' ')[3]!;
    expect(await until('fn answers', () => fetch(`http://${ip}:8080/`).then(async (r) => r.ok && (await r.text()), () => false))).toBe('hello from fn');
  }, 150_000);
});
