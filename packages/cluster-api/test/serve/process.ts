/**
 * `cluster-api serve` as users run it: the built dist/cli.js in a child process, its log (stderr)
 * kept, and kubectl pointed at the kubeconfig it writes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runKubectl, tempDir, type KubectlResult } from '../support/helpers.js';

export const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
export const kubectlBin = '/usr/bin/kubectl';
export const haveKubectl = existsSync(kubectlBin);

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  dir: string;
  /** Everything the process wrote to stderr (its JSON log and anything Node.js printed) so far. */
  log(): string;
  /** Whether the process is still running. */
  alive(): boolean;
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** SIGKILL (if still running) and remove the data directory. */
  close(): Promise<void>;
}

/** Starts `serve --port 0` on a fresh data directory with `args`; resolves once it logs `listening`. */
export function startServe(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npx tsc -b)`);
  const dir = tempDir();
  const child = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let log = '';
  const kubeEnv = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: join(dir, 'data', 'kubeconfig.yaml'), KUBECACHEDIR: join(dir, 'cache') };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      log += d.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(log);
      if (m)
        resolve({
          child, url: m[1]!, dir, alive,
          log: () => log,
          kubectl: (...a) => runKubectl(kubectlBin, kubeEnv, a),
          close: async () => {
            if (alive()) child.kill('SIGKILL');
            await exited;
            rmSync(dir, { recursive: true, force: true });
          },
        });
    });
    child.once('exit', (code, signal) => reject(new Error(`serve exited (${code ?? signal}) before listening: ${log}`)));
  });
}

/**
 * SIGTERM and the process's exit (its node's stop unmounts containers' root filesystems and takes
 * what it made on the host with it), then the data directory.
 */
export async function stopServe(s: ServeProcess | undefined): Promise<void> {
  if (s?.alive()) {
    const exited = new Promise((resolve) => s.child.once('exit', resolve));
    s.child.kill('SIGTERM');
    await exited;
  }
  await s?.close();
}
