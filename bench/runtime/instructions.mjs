// Instructions per request: what each server's main thread executes for one request, counted by
// valgrind's callgrind. Time on a shared machine moves by tens of per cent from one second to the
// next (other tenants' work on the same host), and two processes of one build differ by several per
// cent; an instruction count does not move: the same server, requests and environment give the same
// count within a fraction of a per cent, whatever else the machine is doing. It leaves out what the
// kernel does (sockets, about 40 % of a hello's CPU time, nearly the same for every server) and how
// fast the instructions run (caches), so it complements CPU per request rather than replacing it.
//
// Method: the server runs under callgrind, one scenario at a time; requests are sent one after
// another on one kept-alive connection (so no two share a wake-up); after `warmup` requests
// (JIT-compiled, caches filled) the counters are zeroed, `requests` more are sent, and the main
// thread's count is read. V8's young generation is fixed at 16 MiB (its largest default size, which
// a busy server grows to): otherwise its growth, which depends on timing, changes how often the
// collector runs. Background threads (the JIT compiler, GC helpers) are left out: under valgrind
// everything runs ~50 times slower, so time-driven background work is inflated per request.
//
//   node bench/runtime/instructions.mjs [--scenarios hello,echo,cloudevent] [--frameworks …]
//                                       [--warmup 15000] [--requests 5000] [--processes 1]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { FLOOR, frameworks, repoRoot, serverEnv } from './frameworks.mjs';
import { list, positiveInt } from './options.mjs';
import { SERVER_CPU, freePort, installCleanup, pinSelf, spawnTool, stop, waitForReply } from './procs.mjs';
import { requestOf, scenarios } from './scenarios.mjs';
import { verify } from './servers.mjs';
import { median } from '../lib/stats.mjs';

const YOUNG_GENERATION = ['--min-semi-space-size=16', '--max-semi-space-size=16'];
const START_TIMEOUT_MS = 180_000;

/** Whether valgrind's callgrind and callgrind_control are installed. */
export function callgrindAvailable() {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** `count` requests, one after another on one kept-alive connection. */
async function sendSequentially(port, req, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < count; i++) {
      await new Promise((resolve, reject) => {
        const r = http.request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers: req.headers, agent }, (res) => {
          if (res.statusCode >= 300) reject(new Error(`status ${res.statusCode}`));
          res.resume();
          res.on('end', resolve);
          res.on('error', reject);
        });
        r.on('error', reject);
        r.end(req.body);
      });
    }
  } finally {
    agent.destroy();
  }
}

/** The `summary:` count of a callgrind output file. */
function summaryOf(file) {
  const m = /^summary:\s+(\d+)/m.exec(readFileSync(file, 'utf8'));
  if (!m) throw new Error(`no summary line in ${file}`);
  return Number(m[1]);
}

/**
 * One server process under callgrind for one scenario: main-thread instructions per request, or
 * { ok: false, reason }.
 */
export async function countOnce(fw, scenario, { warmup, requests }, dir) {
  const missing = fw.missing();
  if (missing) return { ok: false, reason: missing };
  const port = await freePort();
  const args = ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${join(dir, 'cg.%p')}`, process.execPath, ...YOUNG_GENERATION, ...(fw.nodeFlags ?? []), ...fw.args(scenario.base ?? scenario.id, port)];
  const child = spawnTool(SERVER_CPU, 'valgrind', args, { cwd: repoRoot, env: serverEnv(), quiet: true });
  try {
    const req = requestOf(scenario);
    const ready = await waitForReply(child, port, req, START_TIMEOUT_MS);
    if (!ready.ok) return { ok: false, reason: `failed to start under valgrind: ${ready.reason}` };
    const problems = await verify(fw, scenario, port);
    if (problems.length > 0) return { ok: false, reason: `wrong reply: ${problems.join('; ')}` };
    await sendSequentially(port, req, warmup);
    execFileSync('callgrind_control', ['-z', String(child.pid)], { stdio: 'ignore' });
    await sendSequentially(port, req, requests);
    execFileSync('callgrind_control', ['-d', String(child.pid)], { stdio: 'ignore' });
    // Part 1 of the dump (counted since the zeroing), thread 1 (the main thread).
    const file = join(dir, `cg.${child.pid}.1-01`);
    return { ok: true, perRequest: summaryOf(file) / requests };
  } catch (err) {
    return { ok: false, reason: err.message };
  } finally {
    await stop(child, 5000);
    for (const f of readdirSync(dir)) if (f.startsWith(`cg.${child.pid}`)) rmSync(join(dir, f), { force: true });
  }
}

/**
 * Every framework × scenario, `processes` times each (a fresh process each time), interleaved.
 * @returns {Promise<Record<string, Record<string, {ok: boolean, perRequest?: number, runs?: number[], reason?: string}>>>}
 */
export async function countInstructions(fws, chosen, opts, say) {
  const dir = mkdtempSync(join(tmpdir(), 'func-callgrind-'));
  const out = {};
  try {
    for (const scenario of chosen) {
      out[scenario.id] = {};
      const runs = Object.fromEntries(fws.map((fw) => [fw.id, []]));
      for (let p = 0; p < opts.processes; p++) {
        for (const fw of fws) {
          if (out[scenario.id][fw.id]?.ok === false) continue;
          const r = await countOnce(fw, scenario, opts, dir);
          if (!r.ok) {
            out[scenario.id][fw.id] = r;
            say(`  ${scenario.id} ${fw.id}: ${r.reason}`);
            continue;
          }
          runs[fw.id].push(r.perRequest);
          say(`  ${scenario.id} ${fw.id.padEnd(20)} ${Math.round(r.perRequest).toLocaleString('en-US').padStart(9)} instructions per request`);
        }
      }
      for (const fw of fws) if (!out[scenario.id][fw.id]) out[scenario.id][fw.id] = { ok: true, perRequest: median(runs[fw.id]), runs: runs[fw.id] };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** The table: instructions per request (× node:http), one row per scenario. */
export function renderInstructions(result, fws, chosen, opts) {
  const lines = [
    `Main-thread instructions per request (callgrind; ${opts.requests} sequential requests after ${opts.warmup}, ${opts.processes} process(es) each, median; young generation fixed at 16 MiB):`,
    '',
    `| | ${fws.map((f) => f.label).join(' | ')} |`,
    `|---|${fws.map(() => '--:').join('|')}|`,
  ];
  for (const s of chosen) {
    const floor = result[s.id]?.[FLOOR];
    const cells = fws.map((fw) => {
      const r = result[s.id]?.[fw.id];
      if (!r?.ok) return 'n/a';
      const ratio = floor?.ok ? ` (${(r.perRequest / floor.perRequest).toFixed(3)}×)` : '';
      const spread = r.runs.length > 1 ? ` [${Math.round(Math.min(...r.runs)).toLocaleString('en-US')}–${Math.round(Math.max(...r.runs)).toLocaleString('en-US')}]` : '';
      return `${Math.round(r.perRequest).toLocaleString('en-US')}${ratio}${spread}`;
    });
    lines.push(`| ${s.label}, instructions per request (× node:http) | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function parseInstructionOptions(argv) {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      scenarios: { type: 'string', default: scenarios.map((s) => s.id).join(',') },
      frameworks: { type: 'string', default: frameworks.map((f) => f.id).join(',') },
      warmup: { type: 'string', default: '15000' },
      requests: { type: 'string', default: '5000' },
      processes: { type: 'string', default: '1' },
    },
  });
  const pick = (value, known, what) => list(what, value, known.map((k) => k.id)).map((id) => known.find((k) => k.id === id));
  return {
    scenarios: pick(v.scenarios, scenarios, 'scenarios'),
    frameworks: pick(v.frameworks, frameworks, 'frameworks'),
    warmup: positiveInt('warmup', v.warmup),
    requests: positiveInt('requests', v.requests),
    processes: positiveInt('processes', v.processes),
  };
}

async function main() {
  const o = parseInstructionOptions(process.argv.slice(2));
  if (!callgrindAvailable()) throw new Error('valgrind (callgrind, callgrind_control) is not installed: apt-get install -y valgrind');
  installCleanup();
  pinSelf();
  const say = (m) => process.stderr.write(`${m}\n`);
  const result = await countInstructions(o.frameworks, o.scenarios, o, say);
  process.stdout.write(`\n${renderInstructions(result, o.frameworks, o.scenarios, o)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    process.stderr.write(`instructions: ${err.message}\n`);
    process.exit(1);
  });
}
