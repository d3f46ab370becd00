/**
 * Finds a function's entry file and imports it (CommonJS, ESM, or TypeScript source), then checks
 * its shape. Every failure becomes a LoadError whose message is one paragraph naming the file and
 * the fix: the CLI prints only that, so a user never has to read a stack dump to learn what to do.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FunctionModule, LoadedFunction } from './types.js';

export class LoadError extends Error {
  override name = 'LoadError';
}

const INDEX_NAMES = ['index.js', 'index.mjs', 'index.cjs', 'index.ts', 'index.mts'];
const HOOK_MEMBERS = ['init', 'shutdown', 'liveness', 'readiness', 'cors'] as const;

export interface ResolvedEntry {
  /** Absolute path of the file to import. */
  file: string;
  /** The project directory: where func.yaml and package.json live. */
  dir: string;
}

function packageMain(dir: string): string | undefined {
  const pkgFile = join(dir, 'package.json');
  if (!existsSync(pkgFile)) return undefined;
  let pkg: { main?: unknown };
  try {
    pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { main?: unknown };
  } catch (err) {
    throw new LoadError(`${pkgFile} is not valid JSON (${(err as Error).message}). Fix package.json, then run again.`);
  }
  return typeof pkg.main === 'string' ? resolve(dir, pkg.main) : undefined;
}

function fileIn(dir: string, names: string[]): string | undefined {
  return names.map((n) => join(dir, n)).find((f) => existsSync(f) && statSync(f).isFile());
}

/** A path is a file, or a directory: package.json `main`, then index.*, then src/index.*. */
export function resolveEntry(path: string, cwd = process.cwd()): ResolvedEntry {
  const abs = resolve(cwd, path);
  const stat = statSync(abs, { throwIfNoEntry: false });
  if (!stat) throw new LoadError(`No function at ${abs}: the path does not exist. Pass the function's directory or entry file, e.g. \`func-runtime ./my-function\`.`);
  if (stat.isFile()) return { file: abs, dir: dirname(abs) };
  const main = packageMain(abs);
  const mainFile = main && (fileIn(dirname(main), [basename(main)]) ?? fileIn(main, INDEX_NAMES));
  const file = mainFile ?? fileIn(abs, INDEX_NAMES) ?? fileIn(join(abs, 'src'), INDEX_NAMES);
  if (file) return { file, dir: abs };
  const mainNote = main ? ` package.json "main" points at ${relative(abs, main)}, which does not exist (build the project, or point "main" at the source).` : '';
  throw new LoadError(`No function entry found in ${abs}.${mainNote} Expected package.json "main", or one of ${INDEX_NAMES.join(', ')} in the directory or in src/. Add an entry module that exports \`handle\`.`);
}

let tsHooksRegistered = false;

function enableTypeScript(): void {
  if (tsHooksRegistered) return;
  tsHooksRegistered = true;
  process.setSourceMapsEnabled(true);
  register('./ts-hooks.js', import.meta.url);
}

const requireLazy = createRequire(import.meta.url);

/** Node does not say where an ES module's syntax error is; esbuild's parser does (error path only). */
function syntaxErrorLocation(file: string): string | undefined {
  try {
    const esbuild = requireLazy('esbuild') as typeof import('esbuild');
    esbuild.transformSync(readFileSync(file, 'utf8'), { loader: /\.m?ts$/.test(file) ? 'ts' : 'js', sourcefile: file });
  } catch (err) {
    const loc = (err as { errors?: { location?: { line: number; column: number } | null }[] }).errors?.[0]?.location;
    if (loc) return `${file}:${loc.line}:${loc.column + 1}`;
  }
  return undefined;
}

function describeImportError(file: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException & { errors?: { text: string; location?: { line: number; column: number } }[] };
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(e?.message ?? '');
  if (missing && (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND')) {
    return `Cannot load ${file}: it imports "${missing[1]}", which cannot be found. If it is a package, add it to package.json and run \`npm install\` in ${dirname(file)}; if it is one of your files, fix the import path.`;
  }
  if (e?.errors?.[0]) {
    const first = e.errors[0];
    const at = first.location ? `:${first.location.line}:${first.location.column}` : '';
    return `Cannot load ${file}${at}: TypeScript syntax error: ${first.text}. Fix the source at that line and run again.`;
  }
  if (e instanceof SyntaxError) {
    const where = /^(\/\S+:\d+)\n/.exec(e.stack ?? '')?.[1] ?? syntaxErrorLocation(file) ?? file;
    return `Cannot load ${file}: syntax error at ${where}: ${e.message}. Fix the source at that line and run again.`;
  }
  const where = (e?.stack ?? '').split('\n').find((l) => l.includes(basename(file)))?.trim();
  return `Cannot load ${file}: its top-level code threw ${e?.name ?? 'an error'}: ${e?.message ?? String(err)}${where ? ` (${where})` : ''}. Fix the module so it loads without throwing.`;
}

/** Picks the Function object out of whatever the module exports. */
export function toFunctionModule(exported: unknown, file = 'the module'): LoadedFunction {
  const ns = exported as Record<string, unknown> | undefined;
  const def = ns?.default as Record<string, unknown> | ((...a: unknown[]) => unknown) | undefined;
  let mod: Record<string, unknown> | undefined;
  if (typeof exported === 'function') mod = { handle: exported };
  else if (typeof ns?.handle === 'function') mod = ns;
  else if (typeof def === 'function') mod = { handle: def };
  else if (def && typeof def === 'object' && typeof def.handle === 'function') mod = def;
  if (!mod) {
    const names = ns && typeof ns === 'object' ? Object.keys(ns).filter((k) => k !== '__esModule') : [];
    const have = names.length ? `it exports ${names.join(', ')}` : 'it exports nothing';
    throw new LoadError(`${file} has no \`handle\` function (${have}). Export one: \`export function handle(context, data) { … }\`, \`export default function\`, or \`module.exports = { handle }\`.`);
  }
  const out: LoadedFunction = { handle: mod.handle as FunctionModule['handle'], source: file };
  for (const name of HOOK_MEMBERS) {
    const v = mod[name];
    if (v === undefined) continue;
    if (typeof v !== 'function') throw new LoadError(`${file} exports \`${name}\`, but it is a ${typeof v}, not a function. Export \`${name}\` as a function or remove it.`);
    (out as unknown as Record<string, unknown>)[name] = v;
  }
  if (mod.logLevel !== undefined) out.logLevel = mod.logLevel as FunctionModule['logLevel'];
  if (mod.includeRaw !== undefined) {
    if (typeof mod.includeRaw !== 'boolean') throw new LoadError(`${file} exports \`includeRaw\`, but it is a ${typeof mod.includeRaw}, not a boolean. Export \`includeRaw = true\` to receive context.rawBody, or remove it.`);
    out.includeRaw = mod.includeRaw;
  }
  return out;
}

type Importer = (url: string) => Promise<unknown>;
let importModule: Importer = (url) => import(url);

/**
 * Where a function's module is imported from: `import()`, unless this code runs where it has none.
 * A function image compiles the runtime as a script with V8's code cache (image/loader.ts), and such
 * a script's own `import()` fails; the image's entry, an ES module, passes its own.
 */
export function importFunctionsWith(importer: Importer): void {
  importModule = importer;
}

/** Imports the entry and returns its Function object; throws LoadError with the fix. */
export async function loadFunction(entry: ResolvedEntry): Promise<LoadedFunction> {
  if (/\.m?ts$/.test(entry.file)) enableTypeScript();
  let ns: unknown;
  try {
    ns = await importModule(pathToFileURL(entry.file).href);
  } catch (err) {
    throw new LoadError(describeImportError(entry.file, err));
  }
  return toFunctionModule(ns, entry.file);
}
