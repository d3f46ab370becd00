// Processes a bench drives: starting one and waiting for the line that says it is up, and what it
// costs (CPU time and resident memory from Linux's /proc).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Spawns `cmd args` and resolves once its stderr (and stdout, when piped) shows a line matching
 * `ready`, with the child and the match; rejects if it exits first. `children` tracks the process so
 * a deadline can kill it.
 */
export function spawnUntil(cmd, args, { ready, env, cwd, stdout = 'ignore', children } = {}) {
  const child = spawn(cmd, args, { stdio: ['ignore', stdout, 'pipe'], env: env ?? process.env, cwd });
  children?.add(child);
  child.once('exit', () => children?.delete(child));
  let log = '';
  return new Promise((resolve, reject) => {
    const streams = [child.stderr, child.stdout].filter(Boolean);
    const onData = (d) => {
      log += d;
      const match = ready.exec(log);
      if (!match) return;
      for (const s of streams) s.off('data', onData), s.resume();
      child.off('exit', onExit);
      resolve({ child, match, log });
    };
    const onExit = (code) => reject(new Error(`${cmd} exited ${code}: ${log.slice(-2000)}`));
    for (const s of streams) s.on('data', onData);
    child.once('error', reject);
    child.once('exit', onExit);
  });
}

/** The JSON log line `cluster-api serve` (and the bare server) writes once it accepts connections. */
export const listeningLine = /"msg":"listening","url":"([^"]+)"/;

/**
 * CPU time the process spent (user + system, ms) from /proc/<pid>/stat (100 ticks a second); NaN
 * once it is gone. Unlike throughput, this hardly moves with what else runs on the machine.
 */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Resident memory of the process (VmRSS, MiB); NaN once it is gone. */
export function rssMiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Each live descendant of `pid` whose command line contains `marker`: its pid and resident memory (kB), from /proc. */
export function descendants(pid, marker) {
  const procs = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      procs.set(Number(entry), { ppid: Number(/PPid:\s+(\d+)/.exec(status)?.[1]), kb: Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1]), cmd });
    } catch {
      /* gone */
    }
  }
  const under = (p) => {
    for (let at = procs.get(p)?.ppid; at; at = procs.get(at)?.ppid) if (at === pid) return true;
    return false;
  };
  return [...procs].filter(([p, info]) => info.kb && info.cmd.includes(marker) && under(p)).map(([p, info]) => ({ pid: p, kb: info.kb }));
}

/** Resident memory (MiB) of each live descendant of `pid` whose command line contains `marker`. */
export const descendantsRssMiB = (pid, marker) => descendants(pid, marker).map((d) => d.kb / 1024);
