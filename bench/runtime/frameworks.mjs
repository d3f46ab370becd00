// How each framework is started to serve one scenario. All run with their default log level and
// options, as a user runs them; only the port differs.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
const fnDir = join(here, 'functions');
const require = createRequire(join(repoRoot, 'bench', 'package.json'));

function binOf(pkg, rel) {
  try {
    return join(dirname(require.resolve(`${pkg}/package.json`)), rel);
  } catch {
    return join(repoRoot, 'node_modules', pkg, rel);
  }
}

let runtimeCli = join(repoRoot, 'packages', 'runtime', 'dist', 'cli.js');

/** Points func-runtime at another copy of its build (see snapshot.mjs). */
export function useRuntimeCli(path) {
  runtimeCli = path;
}
const faasCli = binOf('faas-js-runtime', 'bin/cli.js');
const ffMain = binOf('@google-cloud/functions-framework', 'build/src/main.js');

const knative = { hello: 'knative/hello.mjs', echo: 'knative/echo.mjs' };

/**
 * @typedef {{id: string, label: string, answersEvents?: boolean,
 *   missing: () => string | null, args: (scenario: string, port: number) => string[]}} Framework
 * @type {Framework[]}
 */
export const frameworks = [
  {
    id: 'func-runtime',
    label: 'func-runtime (ours)',
    missing: () => (existsSync(runtimeCli) ? null : 'not built (packages/runtime/dist/cli.js missing)'),
    args: (s, port) => [runtimeCli, join(fnDir, s === 'cloudevent' ? 'func-runtime/cloudevent.mjs' : knative[s]), '--port', String(port)],
  },
  {
    id: 'faas-js-runtime',
    label: 'faas-js-runtime 4',
    missing: () => (existsSync(faasCli) ? null : 'faas-js-runtime not installed'),
    args: (s, port) => [faasCli, join(fnDir, s === 'cloudevent' ? 'faas-js-runtime/cloudevent.mjs' : knative[s]), '--port', String(port)],
  },
  {
    id: 'functions-framework',
    label: 'functions-framework 5',
    answersEvents: false,
    missing: () => (existsSync(ffMain) ? null : '@google-cloud/functions-framework not installed'),
    args: (s, port) => [ffMain, `--target=${s}`, `--source=${join(fnDir, 'functions-framework/functions.cjs')}`, `--port=${port}`],
  },
  {
    id: 'node-http',
    label: 'bare node:http',
    missing: () => null,
    args: (s, port) => [join(fnDir, 'node-http/server.mjs'), s, String(port)],
  },
  {
    // The floor again, with the reply headers func-runtime and faas-js-runtime send: the CORS pair
    // that faas-js-runtime's contract puts on every reply. The same reply, without a framework.
    id: 'node-http-cors',
    label: 'node:http, same headers',
    missing: () => null,
    args: (s, port) => [join(fnDir, 'node-http/server.mjs'), s, String(port), 'cors'],
  },
];

/**
 * Another build of func-runtime, run beside the current one (`--baseline DIR`: a directory holding
 * that build's package.json and dist/, as snapshot.mjs copies them), so a change is measured before
 * and after in the same interleaved rounds.
 */
export function baselineFramework(dir) {
  const cli = join(resolve(dir), 'dist', 'cli.js');
  return {
    id: 'func-runtime-before',
    label: 'func-runtime (before)',
    missing: () => (existsSync(cli) ? null : `no build at ${cli}`),
    args: (s, port) => [cli, join(fnDir, s === 'cloudevent' ? 'func-runtime/cloudevent.mjs' : knative[s]), '--port', String(port)],
  };
}

/**
 * func-runtime again, with V8's garbage collector on the main thread alone (`--single-threaded-gc`,
 * as NODE_OPTIONS sets it): on a core shared with another process, the parallel scavenger's helper
 * threads wait for that core, and each pause grows with them.
 */
export function singleThreadedGcFramework() {
  const base = frameworks.find((f) => f.id === 'func-runtime');
  return { ...base, id: 'func-runtime-stgc', label: 'func-runtime, --single-threaded-gc', nodeFlags: ['--single-threaded-gc'] };
}

/**
 * The ratio columns divide by this framework; CPU per request and instructions divide by the floor,
 * and also by the floor sending the same headers when it is measured.
 */
export const REFERENCE = 'faas-js-runtime';
export const FLOOR = 'node-http';
export const SAME_HEADERS_FLOOR = 'node-http-cors';

export const frameworkIds = frameworks.map((f) => f.id);

/**
 * The environment a user's shell would give, minus variables that would override a framework's
 * port, log level or mode (the bench must measure defaults, whatever the caller's shell exports).
 */
export function serverEnv() {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(FUNC_|FUNCTION_|K_)/.test(key) || key === 'PORT' || key === 'NODE_ENV' || key === 'NODE_OPTIONS') delete env[key];
  }
  return env;
}
