/**
 * Real processes for the end-to-end broker tests, as a user starts them: `cluster-api serve` (with
 * its embedded broker or without), `cluster-api broker`, functions under `func-runtime`, and
 * `func-runtime invoke`. Every process started here is killed by `stopAll()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
export const CLUSTER_API = join(root, 'packages/cluster-api/dist/cli.js');
export const FUNC_RUNTIME = join(root, 'packages/runtime/dist/cli.js');
export const CLOUDEVENTS_TEMPLATE = join(root, 'packages/templates/cloudevents');
export const RECORDER = fileURLToPath(new URL('./fixtures/recorder', import.meta.url));

export interface Proc {
  readonly child: ChildProcess;
  output(): string;
  /** The first JSON log line for which `match` holds (stdout or stderr). */
  line(match: (entry: Record<string, unknown>) => boolean, ms?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

const running = new Set<Proc>();

export function start(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((r) => child.once('exit', () => (r(), [...waiters].forEach((w) => w()))));
  const proc: Proc = {
    child,
    output: () => out,
    line: (match, ms = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          for (const l of out.split('\n')) {
            if (!l.startsWith('{')) continue;
            try {
              const entry = JSON.parse(l) as Record<string, unknown>;
              if (match(entry)) return done(() => resolve(entry));
            } catch {
              // a partial line
            }
          }
          if (child.exitCode !== null || child.signalCode !== null) done(() => reject(new Error(`process exited (${child.exitCode ?? child.signalCode}):\n${out}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`no matching log line in ${ms} ms:\n${out}`))), ms);
        const done = (then: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          then();
        };
        waiters.add(check);
        check();
      }),
    stop: async () => {
      running.delete(proc);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  running.add(proc);
  return proc;
}

export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

/** Runs a command to its end: exit code and output (a non-zero exit is a result, not a throw). */
export function run(args: string[], env: NodeJS.ProcessEnv = {}, ms = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), ms);
  return new Promise((resolve) => child.once('exit', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))));
}

/** A function under func-runtime on a free loopback port; resolves with its URL once it listens. */
export async function startFunction(dir: string, env: NodeJS.ProcessEnv = {}): Promise<{ url: string; proc: Proc }> {
  const proc = start([FUNC_RUNTIME, dir, '--port', '0', '--host', '127.0.0.1', '--log-level', 'info'], env);
  const entry = await proc.line((e) => e.msg === 'listening' && typeof e.port === 'number');
  return { url: `http://127.0.0.1:${entry.port as number}/`, proc };
}

/** The cloudevents template as `create-func` renders it (its `{{name}}` and `{{created}}` filled), without installing. */
export function renderTemplate(target: string, name: string): string {
  const copy = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from)) {
      const src = join(from, entry);
      if (statSync(src).isDirectory()) copy(src, join(to, entry));
      else writeFileSync(join(to, entry), readFileSync(src, 'utf8').replaceAll('{{name}}', name).replaceAll('{{created}}', '2026-01-01T00:00:00Z'));
    }
  };
  copy(CLOUDEVENTS_TEMPLATE, target);
  return target;
}

/** What a recorder function wrote: one entry per event received. */
export function recorded(file: string): { at: number; attributes: Record<string, unknown>; data: unknown }[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { at: number; attributes: Record<string, unknown>; data: unknown });
  } catch {
    return [];
  }
}
