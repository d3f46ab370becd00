import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
export const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

export interface Running {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout(): string;
  stderr(): string;
  exit(): Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Spawns the built CLI on a free port (on 127.0.0.1 unless `listen` says otherwise: `{}` is the command's default) and waits until its liveness probe answers. */
export async function runCli(args: string[], env: Record<string, string> = {}, listen: { host?: string } = { host: '127.0.0.1' }): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, ...args, '--port', String(port), ...(listen.host ? ['--host', listen.host] : [])], {
    env: { ...process.env, FUNC_LOG_LEVEL: 'info', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d));
  child.stderr.on('data', (d: Buffer) => (err += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let exitedEarly = false;
  void exited.then(() => (exitedEarly = true));
  const probe = args.includes('yaml-health') || env.LIVENESS_URL ? undefined : '/health/liveness';
  for (;;) {
    if (exitedEarly) throw new Error(`exited before listening: ${err}${out}`);
    const ok = await fetch(`http://127.0.0.1:${port}${probe ?? '/'}`).then(() => true, () => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    stdout: () => out,
    stderr: () => err,
    exit: () => exited,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** Runs the CLI to completion (for commands that must fail before listening, and the one-shot verbs); killed after `deadlineMs`. */
export async function runCliToExit(args: string[], env: NodeJS.ProcessEnv = {}, opts: { cwd?: string; deadlineMs?: number } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.deadlineMs ?? 15_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code: code as number | null, stdout, stderr };
}
