/**
 * The real cluster API as a child process (`cluster-api serve`, the built CLI): TLS with a generated
 * CA, a bearer token and a kubeconfig in a temporary data directory, on a free port. By default the
 * API alone: no node agent, scheduler or broker, whose writes to the pods a client test makes would be
 * events it does not expect; `{ node: true }` keeps serve's embedded node and scheduler (deploys that run),
 * `{ broker: true }` its broker.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLUSTER_CLI = fileURLToPath(new URL('../../cluster-api/dist/cli.js', import.meta.url));

export interface Cluster {
  url: string;
  dir: string;
  kubeconfig: string;
  /** The admin token serve generated ('' when started with --token-auth-file). */
  token: string;
  /** The registry's host:port, from the listening line. */
  registry: string;
  stop(): Promise<void>;
}

export async function startCluster(opts: { node?: boolean; broker?: boolean; args?: string[] } = {}): Promise<Cluster> {
  if (!existsSync(CLUSTER_CLI)) throw new Error(`${CLUSTER_CLI} is missing: build first (npm run build)`);
  const dir = mkdtempSync(join(tmpdir(), 'kube-client-'));
  const child: ChildProcess = spawn(process.execPath, [CLUSTER_CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'data'), ...(opts.broker ? [] : ['--no-broker']), ...(opts.node ? [] : ['--disable-agent', '--disable-scheduler']), ...(opts.args ?? [])], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const [url, registry] = await new Promise<[string, string]>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"msg":"listening","url":"([^"]+)".*?(?:"registry":"([^"]+)")?/.exec(err);
      if (m) resolve([m[1]!, /"registry":"([^"]+)"/.exec(err)?.[1] ?? '']);
    });
    child.once('exit', (code) => reject(new Error(`cluster-api exited ${code}: ${err.slice(-2000)}`)));
  });
  return {
    url,
    dir,
    kubeconfig: join(dir, 'data', 'kubeconfig.yaml'),
    token: existsSync(join(dir, 'data', 'admin.token')) ? readFileSync(join(dir, 'data', 'admin.token'), 'utf8').trim() : '',
    registry,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function until<T>(fn: () => T | undefined | false, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
