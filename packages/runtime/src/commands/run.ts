/**
 * `func-runtime [path]`: load a function and serve it until SIGTERM. Failures before listening are
 * reported as one paragraph and a non-zero exit; nothing here ends the process itself (cli.ts does).
 */
import type { Argv, CommandModule } from 'yargs';
import { OPTION_TABLE } from '../config.js';
import { readValidFuncYaml } from '../func-yaml.js';
import { installProcessHandlers, type Exit } from '../lifecycle.js';
import { loadFunction, resolveEntry } from '../loader.js';
import { applyEnvDefaults, funcYamlEnvs } from '../run-envs.js';
import { createRuntime } from '../runtime.js';
import { createRuntimeServer, listen } from '../server.js';
import type { Options } from '../types.js';

export class StartError extends Error {
  override name = 'StartError';
}

interface RunArgs {
  path: string;
  [flag: string]: unknown;
}

/** Adds one flag per row of the option table: the table is the only list of options. */
export function withOptionFlags<T>(y: Argv<T>): Argv<T> {
  let out = y;
  for (const row of OPTION_TABLE) {
    const type = typeof row.default === 'boolean' ? 'boolean' : typeof row.default === 'number' ? 'number' : 'string';
    out = out.option(row.flag, { type, describe: `${row.describe} [env ${row.env.join(' / ')}; default ${JSON.stringify(row.default)}]` });
  }
  return out;
}

export function cliOptions(argv: RunArgs): Partial<Options> {
  const out: Record<string, unknown> = {};
  for (const row of OPTION_TABLE) if (argv[row.flag] !== undefined) out[row.key] = argv[row.flag];
  return out as Partial<Options>;
}

function listenError(err: NodeJS.ErrnoException, port: number): StartError {
  if (err.code === 'EADDRINUSE') return new StartError(`Port ${port} is already in use. Stop the other process or choose another port with --port / PORT.`);
  if (err.code === 'EACCES') return new StartError(`Not allowed to listen on port ${port}. Use a port above 1024 with --port / PORT.`);
  return new StartError(`Cannot listen on port ${port}: ${err.message}.`);
}

/** Loads and serves; resolves once listening. Signals later call `exit` with the exit code. */
export async function serve(argv: RunArgs, exit: Exit): Promise<void> {
  const entry = resolveEntry(argv.path);
  const yaml = await readValidFuncYaml(entry.dir);
  // Options read the env as it was, so a bad value is blamed on func.yaml when it came from there.
  const env = { ...process.env };
  // Before the import: a module's top-level code may read the variables func.yaml declares.
  applyEnvDefaults(process.env, funcYamlEnvs(yaml, env));
  const fn = await loadFunction(entry);
  const rt = createRuntime(fn, { options: cliOptions(argv), env, yaml });
  try {
    await fn.init?.();
  } catch (err) {
    throw new StartError(`The init hook of ${entry.file} failed: ${(err as Error)?.message ?? String(err)}. Fix init so it completes, then run again.`);
  }
  const server = createRuntimeServer(rt);
  try {
    await listen(server, rt.options.port, rt.options.host);
  } catch (err) {
    throw listenError(err as NodeJS.ErrnoException, rt.options.port);
  }
  installProcessHandlers(server, rt, exit);
  rt.metrics.ready();
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : rt.options.port;
  rt.logger.info({ port, entry: entry.file }, 'listening');
  if (process.stderr.isTTY) process.stderr.write(`func-runtime: serving ${entry.file} on http://localhost:${port}\n`);
}

export function runCommand(exit: Exit, onError: (err: unknown) => void): CommandModule<object, RunArgs> {
  return {
    command: '$0 [path]',
    describe: 'Serve a function (a file, or a directory with func.yaml / package.json / index.*)',
    builder: (y) => withOptionFlags(y.positional('path', { type: 'string', default: '.', describe: 'function file or directory' })) as Argv<RunArgs>,
    handler: (argv) => serve(argv, exit).catch(onError),
  };
}
