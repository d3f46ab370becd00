/**
 * What a container and the node use now, read where the kernel keeps it (cAdvisor's sources): the
 * cumulative CPU time and the memory working set. A container under runc is its cgroup (v2:
 * `cpu.stat` usage_usec, `memory.current` less `inactive_file`; v1: `cpuacct.usage`,
 * `memory.usage_in_bytes` less `total_inactive_file`); a process-mode container is its process
 * (`/proc/<pid>/schedstat`, else the ticks of `/proc/<pid>/stat`; VmRSS of `/proc/<pid>/status`);
 * the node is the machine (os.cpus(), os.totalmem()/freemem(): /proc/stat and /proc/meminfo).
 * The parsers are pure (usage.test.ts); the readers answer undefined for what is not there (a
 * process that has exited, a cgroup runc has removed).
 */
import { readFileSync } from 'node:fs';
import { cpus, freemem, totalmem } from 'node:os';
import { join } from 'node:path';

export interface Usage {
  /** Cumulative CPU time, in nanoseconds (usageCoreNanoSeconds). */
  cpuNanoSeconds: number;
  /** Memory in use less what the kernel can reclaim at once (the working set the kubelet reports). */
  workingSetBytes: number;
}

/** USER_HZ: the unit of /proc/<pid>/stat's utime and stime on every Linux the agent runs on. */
const TicksPerSecond = 100;

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** `key value` lines (cpu.stat, memory.stat) as numbers by key. */
export const keyedValues = (text: string): Map<string, number> => {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [key, value, ...rest] = line.trim().split(/\s+/);
    if (key && value !== undefined && rest.length === 0 && /^\d+$/.test(value)) out.set(key, Number(value));
  }
  return out;
};

/** A single number file (memory.current, cpuacct.usage); undefined when it holds anything else. */
export const singleValue = (text: string | undefined): number | undefined => {
  const t = text?.trim();
  return t !== undefined && /^\d+$/.test(t) ? Number(t) : undefined;
};

/** The first field of /proc/<pid>/schedstat: time on a CPU, in nanoseconds. */
export const schedstatNanos = (text: string): number | undefined => singleValue(text.trim().split(/\s+/)[0]);

/** utime + stime of /proc/<pid>/stat (fields 14 and 15, counted after the parenthesised command, which may hold spaces), in nanoseconds. */
export const statNanos = (text: string): number | undefined => {
  const end = text.lastIndexOf(')');
  if (end < 0) return undefined;
  const fields = text.slice(end + 2).trim().split(/\s+/);
  // fields[0] is field 3 (state): utime is field 14, stime field 15.
  const [utime, stime] = [singleValue(fields[11]), singleValue(fields[12])];
  return utime === undefined || stime === undefined ? undefined : ((utime + stime) * 1e9) / TicksPerSecond;
};

/** VmRSS of /proc/<pid>/status, in bytes. */
export const statusRssBytes = (text: string): number | undefined => {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text);
  return m ? Number(m[1]) * 1024 : undefined;
};

/** A process's own usage (not its children's). */
export function processUsage(pid: number, proc = '/proc'): Usage | undefined {
  const dir = join(proc, String(pid));
  const cpu = schedstatNanos(read(join(dir, 'schedstat')) ?? '') ?? statNanos(read(join(dir, 'stat')) ?? '');
  const rss = statusRssBytes(read(join(dir, 'status')) ?? '');
  return cpu === undefined || rss === undefined ? undefined : { cpuNanoSeconds: cpu, workingSetBytes: rss };
}

/** The working set of a cgroup's memory: usage less inactive file pages, never below 0. */
const workingSet = (usage: number, inactiveFile: number | undefined): number => Math.max(0, usage - (inactiveFile ?? 0));

/** A cgroup's usage: `path` relative to the hierarchy's root, `root` its mount (default /sys/fs/cgroup). */
export function cgroupUsage(path: string, v2: boolean, root = '/sys/fs/cgroup'): Usage | undefined {
  if (v2) {
    const dir = join(root, path);
    const usec = keyedValues(read(join(dir, 'cpu.stat')) ?? '').get('usage_usec');
    const current = singleValue(read(join(dir, 'memory.current')));
    if (usec === undefined || current === undefined) return undefined;
    return { cpuNanoSeconds: usec * 1000, workingSetBytes: workingSet(current, keyedValues(read(join(dir, 'memory.stat')) ?? '').get('inactive_file')) };
  }
  const cpu = singleValue(read(join(root, 'cpuacct', path, 'cpuacct.usage')) ?? read(join(root, 'cpu,cpuacct', path, 'cpuacct.usage')));
  const usage = singleValue(read(join(root, 'memory', path, 'memory.usage_in_bytes')));
  if (cpu === undefined || usage === undefined) return undefined;
  return { cpuNanoSeconds: cpu, workingSetBytes: workingSet(usage, keyedValues(read(join(root, 'memory', path, 'memory.stat')) ?? '').get('total_inactive_file')) };
}

/** The node's: every CPU's busy time (all but idle and iowait), memory in use less what is available. */
export function nodeUsage(): Usage {
  const busyMs = cpus().reduce((sum, c) => sum + c.times.user + c.times.nice + c.times.sys + c.times.irq, 0);
  return { cpuNanoSeconds: busyMs * 1e6, workingSetBytes: Math.max(0, totalmem() - freemem()) };
}
