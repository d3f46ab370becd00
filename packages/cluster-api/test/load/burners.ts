/**
 * CPU burners: child processes that spin for a bounded time, so a test runs on a machine whose load
 * average is several times its cores, as a busy CI host or a laptop under a build is.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';

export interface Burners {
  /** The 1-minute load average now. */
  load(): number;
  stop(): Promise<void>;
}

/** `count` spinning processes (default three per core), each ending itself after `maxMs` whatever happens to the test. */
export function burnCpu(maxMs: number, count = 3 * cpus().length): Burners {
  const spin = `const end = Date.now() + ${maxMs}; while (Date.now() < end) {}`;
  const children: ChildProcess[] = Array.from({ length: count }, () => spawn(process.execPath, ['-e', spin], { stdio: 'ignore' }));
  const exits = children.map((c) => new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once('exit', () => resolve()))));
  return {
    load: () => loadavg()[0]!,
    stop: async () => {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      await Promise.all(exits);
    },
  };
}

/** The p-th percentile (0–100) of `values`, nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
