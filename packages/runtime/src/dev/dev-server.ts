/**
 * `func-runtime dev`: build, serve, watch, rebuild, swap. One reload runs at a time; saves that
 * land during a reload are folded into one more reload after it, so the served version always
 * ends up matching the files on disk.
 */
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { join, relative } from 'node:path';
import { boot, projectYaml, type BootEnv } from '../boot.js';
import { parseFuncYaml } from '../func-yaml.js';
import { defaultListenHost } from '../listen-host.js';
import { resolveEntry, toFunctionModule, type ResolvedEntry } from '../loader.js';
import type { RuntimeLogger } from '../logger.js';
import { createRuntime } from '../runtime.js';
import type { Served } from '../server.js';
import type { LoadedFunction, Options } from '../types.js';
import { formatProblem, fromLoadError, type SourceProblem } from './build-error.js';
import { createDevBundler, type DevBundler } from './bundler.js';
import { createDevOutput } from './dev-logger.js';
import { EnvFile } from './env-file.js';
import { Reloader } from './reloader.js';
import { BackgroundTypeCheck, formatDiagnostics } from './typecheck.js';
import { watchSources, type SourceWatcher } from './watcher.js';

export interface DevInit {
  path: string;
  /** Options given on the command line. */
  options: Partial<Options>;
  json: boolean;
}

export interface DevSession {
  server: Server;
  url: string;
  /** Drains, runs shutdown, stops watching; resolves to the exit code. */
  stop(reason: string): Promise<number>;
  logger: RuntimeLogger;
}

export class DevStartError extends Error {
  override name = 'StartError';
}

type Loaded =
  | { ok: true; fn: LoadedFunction; inputs: string[]; hash: string }
  | { ok: true; fn: undefined; inputs: string[]; hash: string }
  | { ok: false; problem: SourceProblem; inputs: string[] };

/** What a reload did: swapped in new code, found the code on disk already serving, or failed. */
type Outcome = 'swapped' | 'unchanged' | SourceProblem;

/** Dev shows request logs unless the function, env or func.yaml's run.envs asks for another level. */
const DevDefaults = { logLevel: 'info' } as const;

/** Builds, and imports the result unless it is the code already serving (`servedHash`). */
async function loadVersion(bundler: DevBundler, entry: ResolvedEntry, servedHash: string | undefined): Promise<Loaded> {
  const built = await bundler.build();
  if (!built.ok) return built;
  if (built.hash === servedHash) return { ...built, fn: undefined };
  try {
    const ns: unknown = await import(built.url);
    return { ok: true, fn: toFunctionModule(ns, entry.file), inputs: built.inputs, hash: built.hash };
  } catch (err) {
    const problem = (err as Error)?.name === 'LoadError' ? { file: entry.file, message: (err as Error).message } : fromLoadError(err, entry.dir);
    return { ok: false, problem, inputs: built.inputs };
  }
}

class DevLoop {
  #running: Promise<void> | undefined;
  /** Files saved while a reload ran: they make the next one. */
  #pending = new Set<string>();
  watcher: SourceWatcher | undefined;
  /** The project files the last build was made of. */
  inputs: string[] = [];
  /** The build output now serving. */
  servedHash: string | undefined;
  /** Type errors reported as warnings after each reload, never blocking it. */
  readonly types: BackgroundTypeCheck;

  constructor(
    readonly entry: ResolvedEntry,
    readonly bundler: DevBundler,
    readonly reloader: Reloader,
    readonly env: EnvFile,
    readonly log: RuntimeLogger,
  ) {
    this.types = new BackgroundTypeCheck(entry.dir, (check) => {
      if (check.status === 'failed') log.warn(`${check.count} type error${check.count === 1 ? '' : 's'} (still serving: esbuild strips types; deploy refuses them):\n${formatDiagnostics(check)}`);
      else if (check.status === 'passed') log.info('type errors fixed');
      else if (check.status === 'skipped') log.info(`not type-checked: ${check.reason}`);
    });
  }

  configFiles(): string[] {
    return [join(this.entry.dir, 'func.yaml'), this.env.file];
  }

  /**
   * Loads and swaps in the files on disk. Code identical to what serves is not swapped (no
   * re-init), unless func.yaml or .env changed: options and top-level code read those.
   */
  async update(changed: string[] = []): Promise<Outcome> {
    try {
      this.env.apply();
    } catch (err) {
      return { file: this.env.file, message: (err as Error).message };
    }
    const config = this.configFiles();
    const configChanged = changed.some((f) => config.includes(f));
    const loaded = await loadVersion(this.bundler, this.entry, configChanged ? undefined : this.servedHash);
    this.inputs = loaded.inputs;
    this.watcher?.follow([...loaded.inputs, ...config]);
    if (!loaded.ok) return loaded.problem;
    if (!loaded.fn) return 'unchanged';
    try {
      await this.reloader.swap(loaded.fn);
    } catch (err) {
      const e = err as Error;
      if (e?.name === 'FuncYamlError' || e?.name === 'OptionError') return { file: join(this.entry.dir, 'func.yaml'), message: e.message };
      return { ...fromLoadError(err, this.entry.dir), message: `init failed: ${e?.message ?? String(err)}` };
    }
    this.servedHash = loaded.hash;
    return 'swapped';
  }

  async reload(changed: string[]): Promise<void> {
    const started = performance.now();
    const outcome = await this.update(changed);
    const files = changed.map((f) => relative(this.entry.dir, f)).join(', ');
    if (outcome === 'unchanged') {
      if (this.reloader.stale !== undefined) this.log.info(`back to the serving version (${files})`);
      this.reloader.stale = undefined;
      return;
    }
    if (outcome !== 'swapped') {
      const problem = outcome;
      const line = formatProblem(problem, this.entry.dir);
      this.reloader.stale = line;
      this.log.error({ file: problem.file, line: problem.line, column: problem.column }, `${line} (still serving the last good version)`);
      return;
    }
    this.reloader.stale = undefined;
    const ms = Math.round(performance.now() - started);
    this.log.info({ ms, changed: files }, `reloaded in ${ms} ms (${files})`);
    this.types.request();
  }

  schedule(changed: string[]): void {
    if (this.#running) {
      for (const f of changed) this.#pending.add(f);
      return;
    }
    this.#running = this.reload(changed).finally(() => {
      this.#running = undefined;
      const next = [...this.#pending];
      this.#pending.clear();
      if (next.length > 0) this.schedule(next);
    });
  }

  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }
}

/** Dev's serving: the reloader behind the one listener, and the loop that feeds it. */
interface DevServing extends Served {
  loop: DevLoop;
  reloader: Reloader;
}

/**
 * Builds, loads and swaps in the first version, then watches: boot()'s runtime and init steps for
 * dev. The watcher starts before the server listens, so once it answers, no save is missed.
 */
async function serveReloading(init: DevInit, entry: ResolvedEntry, log: RuntimeLogger, destination: NodeJS.WritableStream | undefined, { env }: BootEnv): Promise<DevServing> {
  const reloader = new Reloader(async (fn) => {
    // func.yaml is read again for each version: a save may have changed it.
    const { doc, warning } = await projectYaml(parseFuncYaml(entry.dir), init.options, env);
    const rt = createRuntime(fn, { options: init.options, env: process.env, yaml: doc, defaults: DevDefaults, destination });
    if (warning) rt.logger.warn(warning);
    return rt;
  });
  const loop = new DevLoop(entry, await createDevBundler(entry.file), reloader, new EnvFile(entry.dir), log);
  const outcome = await loop.update();
  if (outcome !== 'swapped') {
    await loop.bundler.dispose();
    const problem = outcome === 'unchanged' ? { message: 'nothing to serve' } : outcome;
    throw new DevStartError(`Cannot start ${entry.file}: ${formatProblem(problem, entry.dir)}. Fix it and run func-runtime dev again.`);
  }
  loop.watcher = await watchSources([...loop.inputs, ...loop.configFiles()], (changed) => loop.schedule(changed));
  loop.types.request();
  return {
    runtime: () => reloader.runtime!,
    listener: reloader.listener,
    closed: () => undefined,
    dispose: async () => {
      loop.types.stop();
      await loop.watcher?.close();
      await loop.bundler.dispose();
    },
    loop,
    reloader,
  };
}

export async function startDev(init: DevInit): Promise<DevSession> {
  const entry = resolveEntry(init.path);
  process.setSourceMapsEnabled(true);
  const { destination, logger: log } = createDevOutput(init.json);
  let serving: DevServing | undefined;
  const booted = await boot({
    yamlAt: entry.dir,
    options: init.options,
    defaults: { ...DevDefaults, host: defaultListenHost() },
    destination,
    serve: async (env) => (serving = await serveReloading(init, entry, log, destination, env)),
    announce: ({ url }) => log.info({ url, entry: entry.file }, `serving ${relative(process.cwd(), entry.file) || entry.file} at ${url} (watching for changes)`),
  });
  const { loop, reloader } = serving!;
  return {
    server: booted.server,
    url: booted.url,
    logger: log,
    async stop(reason) {
      loop.types.stop();
      await loop.watcher?.close();
      await loop.idle();
      const code = await reloader.stop(booted.server, reason);
      await loop.bundler.dispose();
      return code;
    },
  };
}
