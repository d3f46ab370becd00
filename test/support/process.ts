import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  result: Promise<Result>;
  output(): string;
  /** Ends the process and everything it started (its own process group). */
  stop(): Promise<Result>;
}

/**
 * Starts a command in its own process group: `npm start` runs a shell that runs node, and
 * signalling npm alone would leave the server behind.
 */
export function launch(command: string, args: string[], options: SpawnOptions = {}): Running {
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<Result>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  return {
    child,
    result,
    output: () => stdout + stderr,
    async stop() {
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), 10_000);
      const done = await result;
      clearTimeout(timer);
      signalGroup('SIGKILL'); // anything in the group that outlived its parent
      return done;
    },
  };
}

/** Runs a command to completion. */
export function run(command: string, args: string[], options: SpawnOptions = {}): Promise<Result> {
  return launch(command, args, options).result;
}

/** Formats a result for an assertion message. */
export function describeResult(r: Result): string {
  return `exit ${r.code ?? r.signal}\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}`;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `url` until it answers 200, the process exits, or the time is up. */
export async function waitForOk(url: string, running: Running, timeoutMs = 60_000): Promise<void> {
  let exited = false;
  void running.result.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(url).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} never answered 200 (${exited ? 'the process exited' : 'timed out'}):\n${running.output()}`);
}

/** Polls `probe` until it returns something other than undefined, or throws when the time is up. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
