// Command-line options of `npm run bench` (node bench/run.mjs).
import { parseArgs } from 'node:util';
import { frameworkIds } from './frameworks.mjs';
import { LOADERS, wrkAvailable } from './load.mjs';
import { scenarioIds } from './scenarios.mjs';

export const USAGE = `Usage: npm run bench -- [options]      (or: node bench/run.mjs [options])

  --rounds N          measured rounds per framework and scenario, interleaved (default 5)
  --processes N       spread the rounds over N fresh sets of server processes, each started and
                      warmed up (default 1): evens out how two processes of one build differ
  --duration S        seconds per round (default 5)
  --cpu-seconds S     per process set, seconds in which the servers take turns in 100 ms slices
                      to measure CPU per request over the same stretch of time (default 20; 0: from
                      the rounds instead; needs wrk)
  --warmup S          seconds of load per server before measuring, discarded (default 3)
  --prime S           seconds of load right before each measured round, discarded (default 1; 0:
                      none): a round then starts from the server's own load, not from whatever
                      the server measured before it left in the caches
  --connections N     concurrent connections (default 50)
  --cold-starts N     cold starts per framework, 0 to skip (default 10)
  --scenarios LIST    comma-separated: ${scenarioIds.join(',')} (default all)
  --frameworks LIST   comma-separated: ${frameworkIds.join(',')} (default all)
  --loader NAME       wrk | autocannon (default wrk when installed)
  --contended         also run each scenario with another process busy on the server's core
  --single-threaded-gc  also run func-runtime with node --single-threaded-gc, as its own column
  --baseline DIR      also run the func-runtime build in DIR (its package.json and dist/) as
                      "func-runtime (before)", interleaved with the current build
  --instructions      also count each server's main-thread instructions per request under valgrind's
                      callgrind (bench/runtime/instructions.mjs): a number the machine's noise does
                      not move; about a minute per framework and scenario
  --max-seconds S     abort (killing every child) after S seconds (default: planned time x 1.5 + 60)
  --quick             about a minute: 3 rounds of 1 s, 1 s warm-up, 5 cold starts
  --help`;

const PRESETS = {
  full: { rounds: 5, duration: 5, warmup: 3, prime: 1, coldStarts: 10, cpuSeconds: 20 },
  quick: { rounds: 3, duration: 1, warmup: 1, prime: 0, coldStarts: 5, cpuSeconds: 3 },
};

const FLAGS = {
  rounds: { type: 'string' },
  processes: { type: 'string' },
  duration: { type: 'string' },
  'cpu-seconds': { type: 'string' },
  warmup: { type: 'string' },
  prime: { type: 'string' },
  connections: { type: 'string' },
  'cold-starts': { type: 'string' },
  scenarios: { type: 'string' },
  frameworks: { type: 'string' },
  loader: { type: 'string' },
  'max-seconds': { type: 'string' },
  quick: { type: 'boolean', default: false },
  contended: { type: 'boolean', default: false },
  instructions: { type: 'boolean', default: false },
  'single-threaded-gc': { type: 'boolean', default: false },
  baseline: { type: 'string' },
  help: { type: 'boolean', default: false },
};

export function positiveInt(name, value, min = 1) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got "${value}"`);
  return n;
}

export function list(name, value, known) {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = items.filter((i) => !known.includes(i));
  if (unknown.length > 0 || items.length === 0) throw new Error(`--${name}: unknown "${unknown.join(',')}"; known: ${known.join(',')}`);
  return items;
}

/** @returns {{rounds: number, processes: number, duration: number, cpuSeconds: number, warmup: number, prime: number, connections: number, coldStarts: number,
 *   scenarios: string[], frameworks: string[], loader: string, maxSeconds: number, quick: boolean, help: boolean,
 *   contended: boolean, instructions: boolean, instructionWarmup: number, instructionRequests: number,
 *   baseline: string | undefined}} */
export function parseOptions(argv) {
  const { values: v } = parseArgs({ args: argv, options: FLAGS });
  const preset = v.quick ? PRESETS.quick : PRESETS.full;
  const opts = {
    quick: v.quick,
    help: v.help,
    rounds: v.rounds ? positiveInt('rounds', v.rounds) : preset.rounds,
    processes: v.processes ? positiveInt('processes', v.processes) : 1,
    duration: v.duration ? positiveInt('duration', v.duration) : preset.duration,
    cpuSeconds: v['cpu-seconds'] ? positiveInt('cpu-seconds', v['cpu-seconds'], 0) : preset.cpuSeconds,
    warmup: v.warmup ? positiveInt('warmup', v.warmup) : preset.warmup,
    prime: v.prime ? positiveInt('prime', v.prime, 0) : preset.prime,
    connections: v.connections ? positiveInt('connections', v.connections) : 50,
    coldStarts: v['cold-starts'] ? positiveInt('cold-starts', v['cold-starts'], 0) : preset.coldStarts,
    scenarios: v.scenarios ? list('scenarios', v.scenarios, scenarioIds) : scenarioIds,
    frameworks: v.frameworks ? list('frameworks', v.frameworks, [...frameworkIds, 'func-runtime-before', 'func-runtime-stgc']) : [...frameworkIds],
    contended: v.contended,
    instructions: v.instructions,
    instructionWarmup: 15000,
    instructionRequests: 5000,
    baseline: v.baseline,
    loader: v.loader ? list('loader', v.loader, LOADERS)[0] : wrkAvailable() ? 'wrk' : 'autocannon',
  };
  if (opts.loader === 'wrk' && !wrkAvailable()) throw new Error('--loader wrk: wrk is not installed (apt-get install wrk)');
  if (opts.baseline && !opts.frameworks.includes('func-runtime-before')) opts.frameworks.push('func-runtime-before');
  if (v['single-threaded-gc'] && !opts.frameworks.includes('func-runtime-stgc')) opts.frameworks.push('func-runtime-stgc');
  opts.maxSeconds = v['max-seconds'] ? positiveInt('max-seconds', v['max-seconds']) : Math.ceil(plannedSeconds(opts) * 1.5 + 60);
  return opts;
}

/** Load time plus about a second per server start and per cold start. */
export function plannedSeconds(o) {
  const sets = Math.min(o.processes ?? 1, o.rounds);
  const perScenario = o.frameworks.length * (sets * (o.warmup + 1) + o.rounds * (o.duration + (o.prime ?? 0))) + sets * o.cpuSeconds;
  const counting = o.instructions ? o.scenarios.length * o.frameworks.length * 90 : 0;
  return o.scenarios.length * (o.contended ? 2 : 1) * perScenario + o.coldStarts * o.frameworks.length + counting;
}
