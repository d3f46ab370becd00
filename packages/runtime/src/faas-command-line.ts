/**
 * The `faas-js-runtime` command line: faas-js-runtime 4's (`faas-js-runtime [--log-level L]
 * [--port N] [--include-raw] [--bodyLimit N] <file>`), served by func-runtime in faas-js-runtime
 * compatibility mode unless FUNC_COMPAT says otherwise. A project whose start script says
 * `faas-js-runtime ./build/index.js` runs unchanged after `npm install
 * faas-js-runtime@npm:@func/runtime`. The flags are translated and command-line.ts runs them (it is
 * the one module that ends the process). faas-cli.ts is its entry point.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { runCommandLine } from './command-line.js';
import { OPTION_TABLE } from './config.js';

const USAGE = `Usage: faas-js-runtime [options] <file>

Serves <file> (a function module, or a project directory) with func-runtime, in faas-js-runtime
compatibility mode (FUNC_COMPAT=none for the spec's behaviour).

Options:
  -V, --version            output the version number
  --log-level <log-level>  change the log level of the function (default: "warn")
  --port <port>            change the port the runtime listens on (default: 8080)
  --include-raw            include the raw body in the request context
  --bodyLimit <bodyLimit>  maximum size of the request payload in bytes (default: 1048576)
  -h, --help               display help for command
Every func-runtime option also works here (func-runtime --help).`;

/** faas-js-runtime's flag → func-runtime's. */
const RENAMED: Record<string, string> = { bodyLimit: 'body-limit' };

const FLAGS: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
  version: { type: 'boolean', short: 'V' },
  help: { type: 'boolean', short: 'h' },
  bodyLimit: { type: 'string' },
};
for (const row of OPTION_TABLE) FLAGS[row.flag] = { type: typeof row.default === 'boolean' ? 'boolean' : 'string' };

function translate(args: string[]): string[] | string {
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args, allowPositionals: true, strict: true, options: FLAGS }) as typeof parsed;
  } catch (err) {
    return `faas-js-runtime: ${(err as Error).message}\n${USAGE}`;
  }
  const { values, positionals } = parsed;
  if (values.help) return USAGE;
  if (values.version) return (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  if (positionals.length !== 1) return `faas-js-runtime: ${positionals.length === 0 ? "missing required argument 'file'" : `one file, got ${positionals.join(' ')}`}\n${USAGE}`;
  const out = [positionals[0]!];
  for (const [flag, value] of Object.entries(values)) {
    if (value === undefined || value === false) continue;
    out.push(`--${RENAMED[flag] ?? flag}`);
    if (value !== true) out.push(String(value));
  }
  if (!process.env.FUNC_COMPAT) out.push('--compat', 'faas-js-runtime');
  return out;
}

/** Runs `faas-js-runtime ARGS…`: prints usage, the version or what is wrong, or serves. */
export async function runFaasCommandLine(args: string[]): Promise<void> {
  const translated = translate(args);
  if (typeof translated === 'string') {
    const ok = translated === USAGE || /^\d/.test(translated);
    (ok ? process.stdout : process.stderr).write(`${translated}\n`);
    process.exitCode = ok ? 0 : 2;
    return;
  }
  process.argv.splice(2, Infinity, ...translated);
  await runCommandLine(translated);
}
