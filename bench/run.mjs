// `npm run bench`: func-runtime side by side with faas-js-runtime 4, functions-framework 5 and bare
// node:http. Prints a markdown table and writes it (with the raw numbers) to bench/results/.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runColdStarts } from './runtime/coldstart.mjs';
import { callgrindAvailable, countInstructions } from './runtime/instructions.mjs';
import { withVariants } from './runtime/contention.mjs';
import { baselineFramework, frameworks, repoRoot, singleThreadedGcFramework, useRuntimeCli } from './runtime/frameworks.mjs';
import { bodyFileFor, loaderVersion } from './runtime/load.mjs';
import { loadAverage, machineInfo, runtimeCommit } from './runtime/machine.mjs';
import { USAGE, parseOptions, plannedSeconds } from './runtime/options.mjs';
import { installCleanup, killAll, pinSelf } from './runtime/procs.mjs';
import { renderReport } from './runtime/report.mjs';
import { scenarios as allScenarios } from './runtime/scenarios.mjs';
import { snapshotRuntime } from './runtime/snapshot.mjs';
import { runScenario } from './runtime/throughput.mjs';

const say = (msg) => process.stderr.write(`${msg}\n`);

function commandLine() {
  const args = process.argv.slice(2).join(' ');
  if (process.env.npm_lifecycle_event === 'bench') return `npm run bench${args ? ` -- ${args}` : ''}`;
  return `node bench/run.mjs${args ? ` ${args}` : ''}`;
}

function armDeadline(seconds) {
  const timer = setTimeout(() => {
    say(`bench: exceeded --max-seconds ${seconds}; stopping every child process`);
    killAll('SIGKILL');
    process.exit(124);
  }, seconds * 1000);
  timer.unref();
}

async function measure(opts, fws, scenarios, ctx) {
  const run = { throughput: {}, cold: null };
  for (const s of scenarios) {
    say(`\n${s.label}`);
    run.throughput[s.id] = await runScenario(s, fws, opts, ctx);
  }
  if (opts.coldStarts > 0) {
    say(`\ncold start ×${opts.coldStarts}`);
    run.cold = await runColdStarts(fws, opts.coldStarts, ctx);
  }
  if (opts.instructions) {
    say('\ninstructions per request (callgrind)');
    const counting = { warmup: opts.instructionWarmup, requests: opts.instructionRequests, processes: 1 };
    run.instructions = await countInstructions(fws, scenarios.filter((s) => !s.contended), counting, say);
  }
  return run;
}

/** What the baseline build is: the commit its directory names in a COMMIT file, if it has one. */
function baselineOf(dir) {
  try {
    return readFileSync(join(dir, 'COMMIT'), 'utf8').trim();
  } catch {
    return dir;
  }
}

function save(run, markdown) {
  const dir = join(repoRoot, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const stamp = run.date.replace(/[:.]/g, '-');
  writeFileSync(join(dir, `runtime-${stamp}.md`), markdown);
  writeFileSync(join(dir, `runtime-${stamp}.json`), JSON.stringify(run, null, 2));
  return join('bench', 'results', `runtime-${stamp}.md`);
}

async function main() {
  const opts = parseOptions(process.argv.slice(2));
  if (opts.help) return say(USAGE);
  if (opts.instructions && !callgrindAvailable()) throw new Error('--instructions: valgrind (callgrind, callgrind_control) is not installed: apt-get install -y valgrind');
  installCleanup();
  if (!pinSelf()) say('bench: taskset unavailable; numbers are not pinned to cores');
  armDeadline(opts.maxSeconds);
  const known = [...frameworks, ...(opts.baseline ? [baselineFramework(opts.baseline)] : [])];
  if (opts.frameworks.includes('func-runtime-stgc')) known.push(singleThreadedGcFramework());
  const fws = known.filter((f) => opts.frameworks.includes(f.id));
  const scenarios = withVariants(allScenarios.filter((s) => opts.scenarios.includes(s.id)), opts.contended);
  const tmp = mkdtempSync(join(tmpdir(), 'func-bench-'));
  // Also on Ctrl-C and on the deadline, which end the process without unwinding `finally`.
  process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
  const snapshot = snapshotRuntime(tmp);
  if (snapshot) useRuntimeCli(snapshot.cli);
  const logDir = join(repoRoot, 'bench', 'results', 'logs');
  mkdirSync(logDir, { recursive: true });
  const ctx = { say, logDir, bodyFiles: Object.fromEntries(scenarios.map((s) => [s.id, bodyFileFor(tmp, s)])) };
  say(`bench: ${fws.length} frameworks × ${scenarios.length} scenarios, about ${Math.round(plannedSeconds(opts))} s (${opts.loader})`);
  // Taken before measuring: the runtime's author may commit while the bench runs.
  const started = {
    date: new Date().toISOString(),
    loadBefore: loadAverage(),
    runtimeCommit: runtimeCommit(repoRoot),
    runtimeBuiltAt: snapshot?.builtAt ?? null,
    baseline: opts.baseline ? baselineOf(opts.baseline) : null,
  };
  try {
    const run = { ...started, ...(await measure(opts, fws, scenarios, ctx)), loadAfter: loadAverage() };
    Object.assign(run, {
      options: opts,
      machine: machineInfo(),
      command: commandLine(),
      loaderVersion: loaderVersion(opts.loader),
    });
    const markdown = renderReport(run, fws, scenarios);
    process.stdout.write(`\n${markdown}`);
    say(`\nwritten to ${save(run, markdown)}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  say(`bench: ${err.message}`);
  killAll('SIGKILL');
  process.exit(1);
});
