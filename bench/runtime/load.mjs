// The load generator, always a separate process on the load core: wrk when installed (one thread, it
// is a single core), autocannon otherwise. Both report the same shape.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOAD_CPU, spawnTool, spawnPinned } from './procs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', 'package.json'));

export const LOADERS = /** @type {const} */ (['wrk', 'autocannon']);

export function wrkAvailable() {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk --version exits 1 after printing its version; only a missing binary is ENOENT.
    return err.code !== 'ENOENT';
  }
}

/** "wrk 4.1.0" from wrk's banner ("wrk debian/4.1.0-3+b2 [epoll] Copyright …"). */
export function wrkVersion() {
  let banner = '';
  try {
    banner = execFileSync('wrk', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    banner = String(err.stdout ?? '');
  }
  const m = /(\d+\.\d+\.\d+)/.exec(banner.split('\n')[0]);
  return m ? `wrk ${m[1]}` : 'wrk';
}

export function loaderVersion(loader) {
  if (loader === 'wrk') return wrkVersion();
  return `autocannon ${require('autocannon/package.json').version}`;
}

/** Writes each scenario body to a file once: both generators read the body from a file. */
export function bodyFileFor(tmpDir, scenario) {
  if (scenario.body === undefined) return '';
  const file = join(tmpDir, `${scenario.id}.body`);
  writeFileSync(file, scenario.body);
  return file;
}

/**
 * @returns {Promise<{rps: number, p50Ms: number, p99Ms: number, requests: number, errors: number,
 *   timeouts: number, non2xx: number}>}
 */
export async function runLoad(tool, { port, scenario, bodyFile, connections, seconds }) {
  const url = `http://127.0.0.1:${port}${scenario.path}`;
  const child = tool === 'wrk' ? startWrk(url, scenario, bodyFile, connections, seconds) : startAutocannon(url, scenario, bodyFile, connections, seconds);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (err += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), (seconds + 20) * 1000);
  const exit = await child.exited;
  clearTimeout(killer);
  if (exit.code !== 0) throw new Error(`${tool} failed (${JSON.stringify(exit)}): ${err.trim().slice(-300)}`);
  return tool === 'wrk' ? parseWrk(out) : parseAutocannon(out);
}

function startWrk(url, scenario, bodyFile, connections, seconds, timeoutSeconds) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', join(here, 'wrk-report.lua')];
  if (timeoutSeconds !== undefined) args.push('--timeout', `${timeoutSeconds}s`);
  for (const [k, v] of Object.entries(scenario.headers)) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const env = { ...process.env, BENCH_METHOD: scenario.method, BENCH_BODY_FILE: bodyFile };
  return spawnTool(LOAD_CPU, 'wrk', args, { env });
}

/**
 * wrk, started now and running until `stop()` (SIGINT: wrk stops, then reports as at the end of a
 * timed run); `stop()` resolves to the report. For loads whose end the harness decides (slices.mjs).
 * `timeoutSeconds`: how long a request may wait for its answer (a server may be paused meanwhile).
 */
export function startOpenLoad({ port, scenario, bodyFile, connections, timeoutSeconds }) {
  const child = startWrk(`http://127.0.0.1:${port}${scenario.path}`, scenario, bodyFile, connections, 3600, timeoutSeconds);
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  return {
    async stop() {
      child.kill('SIGINT');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const exit = await child.exited;
      clearTimeout(killer);
      if (exit.code !== 0) throw new Error(`wrk failed (${JSON.stringify(exit)})`);
      return parseWrk(out);
    },
  };
}

function parseWrk(out) {
  const line = out.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (!line) throw new Error(`wrk printed no result: ${out.slice(-300)}`);
  const r = JSON.parse(line.slice('BENCH_RESULT '.length));
  return {
    rps: r.requests / (r.durationUs / 1e6),
    p50Ms: r.p50Us / 1000,
    p99Ms: r.p99Us / 1000,
    requests: r.requests,
    errors: r.connect + r.read + r.write,
    timeouts: r.timeout,
    non2xx: r.status,
  };
}

function startAutocannon(url, scenario, bodyFile, connections, seconds) {
  const bin = join(dirname(require.resolve('autocannon/package.json')), 'autocannon.js');
  const args = [bin, '-c', String(connections), '-d', String(seconds), '-j', '-m', scenario.method];
  for (const [k, v] of Object.entries(scenario.headers)) args.push('-H', `${k}=${v}`);
  if (bodyFile) args.push('-i', bodyFile);
  args.push(url);
  return spawnPinned(LOAD_CPU, args, { env: process.env, pipe: true });
}

function parseAutocannon(out) {
  const r = JSON.parse(out.slice(out.indexOf('{')));
  return {
    rps: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
  };
}
