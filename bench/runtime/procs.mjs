// Child processes: every server and load generator goes through here so that none outlives the bench,
// whether it ends normally, fails, hits its deadline or is interrupted with Ctrl-C.
import { spawn, execFileSync } from 'node:child_process';
import { openSync, closeSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from './http.mjs';

const live = new Set();

/** Servers run on core 0; the harness and the load generator on core 1, so they never share a core. */
export const SERVER_CPU = '0';
export const LOAD_CPU = '1';

/** Moves the harness itself onto the load core: its polling must not steal the server's core. */
export function pinSelf() {
  try {
    execFileSync('taskset', ['-cp', LOAD_CPU, String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function killAll(signal = 'SIGKILL') {
  for (const child of live) {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

let hooked = false;
/** Installs exit/signal hooks once: SIGKILL on exit is synchronous, so it also runs from process.exit. */
export function installCleanup() {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => killAll('SIGKILL'));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`\n${sig}: stopping ${live.size} child process(es)\n`);
      killAll('SIGKILL');
      process.exit(130);
    });
  }
}

/**
 * Spawns `node <args>` under taskset. taskset execs its command, so child.pid is the node process
 * itself (what RSS must be read from), not a wrapper.
 */
export function spawnPinned(cpu, args, { env, cwd, logFile, pipe = false } = {}) {
  const fd = logFile ? openSync(logFile, 'a') : pipe ? 'pipe' : 'ignore';
  const child = spawn('taskset', ['-c', cpu, process.execPath, ...args], {
    cwd,
    env,
    stdio: ['ignore', fd, fd],
  });
  if (typeof fd === 'number') closeSync(fd);
  track(child);
  return child;
}

/** Spawns a non-node command (wrk, valgrind) under taskset, capturing its output unless `quiet`. */
export function spawnTool(cpu, cmd, args, { env, cwd, quiet = false } = {}) {
  const child = spawn('taskset', ['-c', cpu, cmd, ...args], { env, cwd, stdio: quiet ? 'ignore' : ['ignore', 'pipe', 'pipe'] });
  track(child);
  return child;
}

function track(child) {
  live.add(child);
  child.exitInfo = null;
  child.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      child.exitInfo = { code, signal };
      resolve(child.exitInfo);
    });
    child.on('error', (err) => {
      live.delete(child);
      child.exitInfo = { code: null, signal: null, error: err.message };
      resolve(child.exitInfo);
    });
  });
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export async function stop(child, graceMs = 2000) {
  if (child.exitInfo) return child.exitInfo;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const info = await child.exited;
  clearTimeout(timer);
  return info;
}

/** A port free right now on 127.0.0.1 (the OS picks it; closed again before the server binds it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Connects in a tight loop until the server answers `req` with a reply `accept` takes (by default
 * any), the child exits, or the deadline passes. Refused connections are retried at once: the
 * cold-start number depends on it.
 */
export async function waitForReply(child, port, req, timeoutMs, accept = () => true) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitInfo) return { ok: false, reason: describeExit(child.exitInfo) };
    try {
      const res = await request(port, req, 1000);
      if (accept(res)) return { ok: true, res };
      if (Date.now() > deadline) return { ok: false, reason: `status ${res.status} after ${timeoutMs} ms` };
    } catch (err) {
      if (Date.now() > deadline) return { ok: false, reason: `no reply within ${timeoutMs} ms (${err.code ?? err.message})` };
      if (err.code !== 'ECONNREFUSED' && err.code !== 'ECONNRESET') await new Promise((r) => setTimeout(r, 5));
    }
  }
}

function describeExit({ code, signal, error }) {
  if (error) return `could not spawn: ${error}`;
  return signal ? `exited on ${signal}` : `exited with code ${code}`;
}

/** VmRSS of the process in KiB, after checking the pid is the node binary (not a wrapper). */
export function rssKiB(pid) {
  const exe = readlinkSync(`/proc/${pid}/exe`);
  if (exe !== process.execPath && !exe.endsWith('/node')) throw new Error(`pid ${pid} is ${exe}, not node`);
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of one task from /proc/…/stat (fields 14 and 15): clock ticks, 10 ms each. */
function tickSeconds(path) {
  const stat = readFileSync(path, 'utf8');
  // The command name (field 2) may contain spaces; fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** Nanoseconds a task has run on a CPU (/proc/…/schedstat, the scheduler's own account), or undefined. */
function runNanos(path) {
  try {
    return Number(readFileSync(path, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds the process has used so far, all its threads; with `thread`, that one thread's (the
 * main thread's id is the pid). Read from the scheduler's per-thread run time, which counts in
 * nanoseconds: the tick counts of /proc/<pid>/stat move in 10 ms steps, 1 % of a 1 s round at full
 * load, which is the size of the differences measured here. Falls back to the ticks where there is
 * no schedstat.
 */
export function cpuSeconds(pid, thread) {
  const tasks = thread === undefined ? readdirSync(`/proc/${pid}/task`) : [String(thread)];
  let ns = 0;
  for (const tid of tasks) {
    const n = runNanos(`/proc/${pid}/task/${tid}/schedstat`);
    // No schedstat for the first task: none on this kernel. Later ones may just have exited.
    if (n === undefined && ns === 0) return tickSeconds(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`);
    ns += n ?? 0;
  }
  return ns / 1e9;
}

/** The last lines of a server's log, for the reason a server failed. */
export function logTail(file, maxChars = 600) {
  try {
    const text = readFileSync(file, 'utf8');
    return text.slice(-maxChars).trim();
  } catch {
    return '';
  }
}

export function fileSize(file) {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
