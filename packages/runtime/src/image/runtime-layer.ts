/**
 * The image's runtime layer: func-runtime bundled, every package it needs inlined (pino, the
 * cloudevents SDK, prom-client, yaml…), as esbuild bundles a function. Measured against the
 * alternative, the package's npm closure without esbuild (bench/deploy/README.md): three files
 * instead of ~3,800 and 3.4 MiB gzip'd, so the layer is read and hashed in a few milliseconds and a
 * node unpacks three files. The files (loader.ts says how they start):
 *
 * - func-runtime.mjs, the entry (image/entry.ts): a few lines;
 * - func-runtime-serve.cjs, what a cold start runs (image/serve-entry.ts): serving, ~600 KB;
 * - func-runtime-cli.mjs, the whole command line (cli.ts), for anything but serving.
 *
 * Beside the layer, V8's code cache of func-runtime-serve.cjs for the Node.js that builds (which is
 * the one a node runs the image with: node-binary.ts in cluster-api), a layer of its own so that the
 * runtime layer stays the same bytes on every Node.js. It is made by compiling the bundle without
 * running it, with V8's random seed fixed (`--random-seed`, which V8 leaves out of the flags a cache
 * must match): the same bundle and Node.js give the same bytes, so images stay reproducible.
 *
 * Left out: what only building and developing need (esbuild, chokidar, pino-pretty) and what only
 * `build --image` / `deploy` need (@func/oci, @func/kube-client); the image serves, nothing more.
 *
 * The bundle is made once per installed runtime and cached with the size and mtime of every input
 * esbuild read, as make would: a cache hit costs one stat per input (a few hundred).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BuildOptions, Plugin } from 'esbuild';
import type { RuntimeLayer, TarEntry } from '@func/oci';
import { NODE_ESM_BUNDLE } from '../dev/build-bundle.js';
import { CLI_FILE, CODE_CACHE_FILE, SERVE_FILE } from './loader.js';

/** The runtime's entry in the layer (under /func/runtime/). */
export const RUNTIME_FILE = 'func-runtime.mjs';
const CACHE_FORMAT = 2;
const LEFT_OUT = ['esbuild', 'chokidar', 'pino-pretty', '@func/oci', '@func/kube-client'];

/** This package's root: dist/image/runtime-layer.js is two levels below it. */
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

interface CacheEntry {
  format: number;
  /** [path, size, mtimeMs] of every file esbuild read. */
  inputs: [string, number, number][];
  outputs: { path: string; text: string }[];
  /** V8's code cache of the serve bundle, for the V8 that made it. */
  codeCache?: { v8: string; arch: string; base64: string };
}

/** Where built runtime layers are kept: $XDG_CACHE_HOME/func-runtime, else ~/.cache/func-runtime. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'func-runtime');
}

/**
 * The runtime reaches some packages through `createRequire(import.meta.url)`: `requireLazy` so that
 * they load on first use, `requireSync` so that the entry points load the rest without import (see
 * cli.ts). esbuild follows only `require`, so those calls are renamed for the bundle, where they
 * keep their timing (esbuild evaluates a required module on its first call).
 */
function lazyRequires(): Plugin {
  return {
    name: 'func-lazy-requires',
    setup(build) {
      build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
        if (!args.path.startsWith(packageRoot)) return undefined;
        const source = readFileSync(args.path, 'utf8');
        return { contents: source.replace(/\brequire(?:Lazy|Sync)\(('[^']+')\)/g, 'require($1)'), loader: 'js' };
      });
    },
  };
}

function fresh(entry: CacheEntry | undefined): entry is CacheEntry {
  if (entry?.format !== CACHE_FORMAT || entry.inputs.length === 0) return false;
  return entry.inputs.every(([path, size, mtimeMs]) => {
    const s = statSync(path, { throwIfNoEntry: false });
    return s !== undefined && s.size === size && s.mtimeMs === mtimeMs;
  });
}

/** The serve bundle as a CommonJS script (loader.ts compiles it with vm.Script): import.meta is the file's own. */
const CJS_SCRIPT: BuildOptions = {
  ...NODE_ESM_BUNDLE,
  format: 'cjs',
  banner: { js: `"use strict";const __funcImportMetaUrl=require("node:url").pathToFileURL(__filename).href;` },
  define: { 'import.meta.url': '__funcImportMetaUrl', 'import.meta.dirname': '__dirname', 'import.meta.filename': '__filename' },
};

async function bundleRuntime(): Promise<CacheEntry> {
  const esbuild = await import('esbuild');
  const common: BuildOptions = { absWorkingDir: packageRoot, write: false, metafile: true, legalComments: 'linked', external: LEFT_OUT, plugins: [lazyRequires()] };
  const dist = (file: string) => join(packageRoot, 'dist', file);
  const out = (file: string) => join(packageRoot, '.image', file);
  const results = await Promise.all([
    esbuild.build({ ...NODE_ESM_BUNDLE, ...common, entryPoints: [dist('image/entry.js')], outfile: out(RUNTIME_FILE), legalComments: 'none' }),
    esbuild.build({ ...CJS_SCRIPT, ...common, entryPoints: [dist('image/serve-entry.js')], outfile: out(SERVE_FILE) }),
    esbuild.build({ ...NODE_ESM_BUNDLE, ...common, entryPoints: [dist('cli.js')], outfile: out(CLI_FILE) }),
  ]);
  // A left-out package imported statically would be hoisted to the bundle's top and fail every start.
  const hoisted = results.flatMap((r) => Object.values(r.metafile!.outputs).flatMap((o) => o.imports)).filter((i) => i.external && i.kind === 'import-statement' && LEFT_OUT.some((p) => i.path === p || i.path.startsWith(`${p}/`)));
  if (hoisted.length) throw new Error(`The runtime bundle imports ${hoisted.map((i) => i.path).join(', ')} at its top level; import ${hoisted.length === 1 ? 'it' : 'them'} lazily (await import) so that serving never loads ${hoisted.length === 1 ? 'it' : 'them'}.`);
  const inputs = [...new Set(results.flatMap((r) => Object.keys(r.metafile!.inputs)))].map((rel): [string, number, number] => {
    const path = join(packageRoot, rel);
    const s = statSync(path);
    return [path, s.size, s.mtimeMs];
  });
  return { format: CACHE_FORMAT, inputs, outputs: results.flatMap((r) => r.outputFiles!.map((f) => ({ path: basename(f.path), text: f.text }))) };
}

/**
 * V8's code cache of the serve bundle, made by a Node.js of the building one's binary with no flags
 * but `--random-seed` (a flag changes what V8 accepts; the seed makes the bytes the same each time).
 * Undefined when it cannot be made: the image then starts as it would without it, only slower.
 */
async function codeCache(serveSource: string): Promise<Buffer | undefined> {
  const loader = pathToFileURL(join(packageRoot, 'dist', 'image', 'loader.js')).href;
  const script = `import { codeCacheOf } from ${JSON.stringify(loader)}; import { readFileSync } from 'node:fs'; process.stdout.write(codeCacheOf(readFileSync(0, 'utf8')));`;
  const child = spawn(process.execPath, ['--random-seed=1', '--input-type=module', '-e', script], { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['pipe', 'pipe', 'ignore'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  child.stdin.end(serveSource);
  child.stdin.on('error', () => undefined);
  const code = await new Promise<number | null>((resolve) => child.once('error', () => resolve(null)).once('close', resolve));
  return code === 0 && chunks.length > 0 ? Buffer.concat(chunks) : undefined;
}

function readCache(file: string): CacheEntry | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CacheEntry;
  } catch {
    return undefined;
  }
}

/** A cache that cannot be written (read-only home) only costs the next build a bundle. */
function writeCache(file: string, entry: CacheEntry): void {
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(entry));
    renameSync(tmp, file);
  } catch {
    // not cached
  }
}

export interface BuiltRuntimeLayer extends RuntimeLayer {
  /** The code cache layer's file and the Node.js it is for (see the top of this file); absent when it could not be made. */
  codeCache?: NonNullable<RuntimeLayer['codeCache']>;
  /** Whether the bundle came from the cache. */
  cached: boolean;
  /**
   * `faas-js-runtime` when this runtime is installed under that name (a project that switched with
   * `npm install faas-js-runtime@npm:@func/runtime`): the image must keep its compatibility mode.
   */
  compat?: 'faas-js-runtime';
}

export async function runtimeLayer(cache = cacheDir()): Promise<BuiltRuntimeLayer> {
  const file = join(cache, `runtime-${createHash('sha256').update(packageRoot).digest('hex').slice(0, 16)}.json`);
  const entry = readCache(file);
  const cached = fresh(entry);
  const made = cached ? entry! : await bundleRuntime();
  let changed = !cached;
  if (made.codeCache?.v8 !== process.versions.v8 || made.codeCache.arch !== process.arch) {
    const serve = made.outputs.find((o) => o.path === SERVE_FILE)!;
    const data = await codeCache(serve.text);
    made.codeCache = data && { v8: process.versions.v8, arch: process.arch, base64: data.toString('base64') };
    changed = !!data || changed;
  }
  if (changed) writeCache(file, made);
  const entries: TarEntry[] = made.outputs.map((o) => ({ path: o.path, type: 'file', mode: 0o644, data: Buffer.from(o.text) }));
  const codeCacheLayer = made.codeCache && { node: process.version, entries: [{ path: CODE_CACHE_FILE, type: 'file' as const, mode: 0o644, data: Buffer.from(made.codeCache.base64, 'base64') }] };
  return { entries, cli: RUNTIME_FILE, ...(codeCacheLayer ? { codeCache: codeCacheLayer } : {}), cached, ...(basename(packageRoot) === 'faas-js-runtime' ? { compat: 'faas-js-runtime' as const } : {}) };
}
