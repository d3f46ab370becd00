/** Process helpers for the dev, build, invoke and entrypoint tests: real processes, bounded polling. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** Generous: the machine is shared, and a deadline only bounds a wait, it never measures speed. */
export const DEADLINE_MS = 20_000;

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Polls `probe` until it returns something other than undefined, or throws after the deadline. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, deadlineMs = DEADLINE_MS): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A copy of a fixture in a fresh temp directory, so a test may edit it. */
export function copyFixture(name: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `func-${name}-`));
  cpSync(join(FIXTURES, name), dir, { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Proc {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  /** Waits until the combined output matches. */
  waitFor(pattern: RegExp, deadlineMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const started = new Set<ChildProcess>();

/** Spawns `node cli.js …args`; every process it starts is killed by killAll(). */
export function spawnCli(args: string[], options: SpawnOptions = {}): Proc {
  const child = spawn(process.execPath, [CLI, ...args], { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d));
  child.stderr!.on('data', (d: Buffer) => (out += d));
  const exited = once(child, 'exit').then(([code]) => {
    started.delete(child);
    return code as number | null;
  });
  return {
    child,
    output: () => out,
    exited,
    waitFor: (pattern, deadlineMs) => until(`output matching ${pattern}\n--- output so far ---\n${out}`, () => out.match(pattern) ?? undefined, deadlineMs),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** SIGTERM first, so a dev session removes its temp files; SIGKILL if it has not exited within 5 s. */
export async function killAll(): Promise<void> {
  await Promise.all([...started].map(async (c) => {
    if (c.exitCode !== null || c.signalCode !== null) return;
    const exited = once(c, 'exit').catch(() => undefined);
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }));
}

/** GET → body text, or undefined while the server is not answering. */
export async function text(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url);
    return await res.text();
  } catch {
    return undefined;
  }
}
