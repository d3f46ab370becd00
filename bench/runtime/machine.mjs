// What the table's reader needs to judge the numbers: the machine, its load, and the code measured.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

export function machineInfo() {
  let cpuModel = os.cpus()[0]?.model ?? 'unknown CPU';
  try {
    cpuModel = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel;
  } catch {
    // not Linux: os.cpus() is the best we have
  }
  return {
    cpuModel,
    // os.cpus(), not availableParallelism(): the harness pins itself to one core.
    cores: os.cpus().length,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
    node: process.version,
  };
}

export function loadAverage() {
  return os.loadavg().map((n) => n.toFixed(2)).join(' ');
}

/** The last commit touching packages/runtime, and whether its files differ from it. */
export function runtimeCommit(repoRoot) {
  try {
    const git = (...args) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
    const head = git('log', '-1', '--format=%h', '--', 'packages/runtime');
    const dirty = git('status', '--porcelain', '--', 'packages/runtime') !== '';
    return `${head || 'no commit'}${dirty ? ' (with uncommitted changes)' : ''}`;
  } catch {
    return 'unknown commit';
  }
}
