/**
 * How a function image starts the runtime (entry.ts, its /func/runtime/func-runtime.mjs): it compiles
 * the serving half of the runtime (serve-entry.ts, bundled as func-runtime-serve.cjs) as a script
 * with V8's code cache, so a cold start deserializes the runtime's compiled code instead of parsing
 * ~600 KB of JavaScript. Node.js 20 has no code cache for ES modules (`module.enableCompileCache`
 * came in 22), and `vm.Script` has one on every version, hence a script.
 *
 * The cache (func-runtime-serve.cjs.v8cache) is made when the image is built (runtime-layer.ts),
 * by the building Node.js; V8 takes it only when its version and flags are the ones that made it
 * and refuses it otherwise (a Node.js base image of another version, `--max-old-space-size` on the
 * command line), in which case the script compiles as it would have: the cache can only save time.
 * It lives in the image, read-only to the container, made once per image: no pod writes code that
 * another pod runs.
 *
 * The script's own `import()` does not work (V8 drops the import callback of code it deserialized),
 * so this module imports the function for it. Anything but a plain run goes to the whole command
 * line (func-runtime-cli.mjs).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Script } from 'node:vm';

export const SERVE_FILE = 'func-runtime-serve.cjs';
export const CODE_CACHE_FILE = 'func-runtime-serve.cjs.v8cache';
export const CLI_FILE = 'func-runtime-cli.mjs';

type ServeEntry = typeof import('./serve-entry.js');

/** The script made of the serve bundle's source: the same text when the cache is made and used. */
export function serveScript(source: string, filename: string, cachedData?: Buffer): Script {
  return new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename, cachedData });
}

/** V8's code cache of the serve bundle, compiled and not run (so it is the same bytes every time; see runtime-layer.ts). */
export function codeCacheOf(source: string): Buffer {
  return serveScript(source, SERVE_FILE).createCachedData();
}

/** Compiles the serve bundle in `dir` with its code cache when there is one, and runs its top level. */
export function loadServeEntry(dir: string): { entry: ServeEntry; cacheRejected: boolean | undefined } {
  const file = join(dir, SERVE_FILE);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(join(dir, CODE_CACHE_FILE));
  } catch {
    // no cache: compiled from source
  }
  const script = serveScript(readFileSync(file, 'utf8'), file, cachedData);
  const module = { exports: {} as ServeEntry };
  (script.runInThisContext() as (...a: unknown[]) => void)(module.exports, createRequire(file), module, file, dir);
  return { entry: module.exports, cacheRejected: cachedData ? script.cachedDataRejected : undefined };
}

/** Runs the image's command line (`process.argv`), the runtime's files being in `dir`. */
export async function runImageEntry(dir: string): Promise<void> {
  const { entry } = loadServeEntry(dir);
  if (!(await entry.main(process.argv.slice(2), (url) => import(url)))) await import(pathToFileURL(join(dir, CLI_FILE)).href);
}
