// Reads a V8 .cpuprofile (node --cpu-prof) into self-time tables: per function and per module.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * Self time in ms per profile node id, from the sample stream (timeDeltas[i] precedes samples[i]),
 * counting only samples inside [fromUs, toUs] when given: V8 stamps samples with the monotonic clock
 * that process.hrtime reads too, so a window taken in the harness selects the steady-state part.
 */
function selfTimes(profile, fromUs = -Infinity, toUs = Infinity) {
  const self = new Map();
  const { samples, timeDeltas } = profile;
  let ts = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    ts += timeDeltas[i];
    if (ts < fromUs || ts > toUs) continue;
    // The delta after a sample is the time spent in it; the last sample gets none.
    const dt = (timeDeltas[i + 1] ?? 0) / 1000;
    self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
  }
  return self;
}

/** Where a function lives, short: a package name, a file of this repo, or node:internal. */
export function moduleOf(url, repoRoot, functionName = '') {
  if (!url) return functionName.startsWith('(') ? functionName : '(native / V8 builtins)';
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = path.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (path.startsWith('node:')) return path.split('/').slice(0, 2).join('/');
  return path.startsWith('/') ? relative(repoRoot, path) : path;
}

/** A function's file, short: `package/path/in/package.js`, a repo-relative path, or node:… as is. */
function fileOf(url, repoRoot) {
  const path = url.replace(/^file:\/\//, '');
  const nm = path.lastIndexOf('/node_modules/');
  if (nm >= 0) return path.slice(nm + '/node_modules/'.length);
  return path.startsWith('/') ? relative(repoRoot, path) : path;
}

/**
 * @returns {{totalMs: number, functions: Array<{name: string, where: string, ms: number}>,
 *   modules: Array<{module: string, ms: number}>}}
 */
export function summarize(file, repoRoot, { window = {}, moved } = {}) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const self = selfTimes(profile, window.fromUs, window.toUs);
  // Code run from a copy (the bench's snapshot of the runtime's build) is named by where it came from.
  const original = (url) => (moved && url.includes(moved.from) ? url.replace(moved.from, moved.to) : url);
  const byFn = new Map();
  const byModule = new Map();
  let totalMs = 0;
  for (const node of profile.nodes) {
    const ms = self.get(node.id) ?? 0;
    const { functionName, lineNumber } = node.callFrame;
    const url = original(node.callFrame.url);
    // Idle is time the process waited (for the load generator, or for a core shared with others).
    if (ms === 0 || functionName === '(idle)') continue;
    totalMs += ms;
    const mod = moduleOf(url, repoRoot, functionName);
    const where = url ? `${fileOf(url, repoRoot)}:${lineNumber + 1}` : mod;
    const key = `${functionName || '(anonymous)'}\u0000${where}`;
    byFn.set(key, (byFn.get(key) ?? 0) + ms);
    byModule.set(mod, (byModule.get(mod) ?? 0) + ms);
  }
  const functions = [...byFn].map(([k, ms]) => {
    const [name, where] = k.split('\u0000');
    return { name, where, ms };
  });
  const modules = [...byModule].map(([module, ms]) => ({ module, ms }));
  return { totalMs, functions: functions.sort((a, b) => b.ms - a.ms), modules: modules.sort((a, b) => b.ms - a.ms) };
}
