/**
 * `cluster-api serve` as users run it: the built dist/cli.js in a child process, TLS on, its own data
 * dir, generated token and kubeconfig; and kubectl's environment for it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/helpers.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

export interface ServeProcess {
  url: string;
  /** The admin's bearer token and the CA its kubeconfig trusts. */
  token: string;
  ca: string;
  kubeconfig: string;
  /** PATH, a private HOME and cache, the generated kubeconfig. */
  env: NodeJS.ProcessEnv;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, wait for the exit, remove the data dir. */
  close(): Promise<void>;
}

/** Starts `serve --port 0` with `args` (default storage: SQLite in the data dir) and waits until it listens. */
export async function startServe(args: readonly string[] = []): Promise<ServeProcess> {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npx tsc -b)`);
  const dir = tempDir();
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  const child: ChildProcess = spawn(process.execPath, [cli, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), '--kubeconfig-out', kubeconfig, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(err);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return {
    url,
    token: readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim(),
    ca: readFileSync(join(dir, 'data', 'tls', 'ca.crt'), 'utf8'),
    kubeconfig,
    env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') },
    stderr: () => err,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
