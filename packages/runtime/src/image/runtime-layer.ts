/**
 * The image's runtime layer: func-runtime itself as one ES module, every package it needs to serve
 * inlined (pino, the cloudevents SDK, prom-client, yaml…), as esbuild bundles a function. Measured
 * against the alternative, the package's npm closure without esbuild (bench/deploy/README.md): one
 * 1 MB file instead of ~3,800 files and 3.4 MiB gzip'd, so the layer is read and hashed in a few
 * milliseconds, a node unpacks one file, and Node resolves one module at every cold start.
 *
 * Left out: what only building and developing need (esbuild, chokidar, pino-pretty) and what only
 * `build --image` / `deploy` need (@func/oci, @func/kube-client); the image serves, nothing more.
 *
 * The bundle is made once per installed runtime and cached with the size and mtime of every input
 * esbuild read, as make would: a cache hit costs one stat per input (a few hundred).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import type { RuntimeLayer, TarEntry } from '@func/oci';
import { NODE_ESM_BUNDLE } from '../dev/build-bundle.js';

/** The runtime's file in the layer (under /func/runtime/). */
export const RUNTIME_FILE = 'func-runtime.mjs';
const CACHE_FORMAT = 1;
const LEFT_OUT = ['esbuild', 'chokidar', 'pino-pretty', '@func/oci', '@func/kube-client'];

/** This package's root: dist/image/runtime-layer.js is two levels below it. */
const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

interface CacheEntry {
  format: number;
  /** [path, size, mtimeMs] of every file esbuild read. */
  inputs: [string, number, number][];
  outputs: { path: string; text: string }[];
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

async function bundleRuntime(): Promise<CacheEntry> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    ...NODE_ESM_BUNDLE,
    absWorkingDir: packageRoot,
    entryPoints: [join(packageRoot, 'dist', 'cli.js')],
    outfile: join(packageRoot, '.image', RUNTIME_FILE),
    write: false,
    metafile: true,
    legalComments: 'linked',
    external: LEFT_OUT,
    plugins: [lazyRequires()],
  });
  // A left-out package imported statically would be hoisted to the bundle's top and fail every start.
  const hoisted = Object.values(result.metafile.outputs).flatMap((o) => o.imports).filter((i) => i.external && i.kind === 'import-statement' && LEFT_OUT.some((p) => i.path === p || i.path.startsWith(`${p}/`)));
  if (hoisted.length) throw new Error(`The runtime bundle imports ${hoisted.map((i) => i.path).join(', ')} at its top level; import ${hoisted.length === 1 ? 'it' : 'them'} lazily (await import) so that serving never loads ${hoisted.length === 1 ? 'it' : 'them'}.`);
  const inputs = Object.keys(result.metafile.inputs).map((rel): [string, number, number] => {
    const path = join(packageRoot, rel);
    const s = statSync(path);
    return [path, s.size, s.mtimeMs];
  });
  return { format: CACHE_FORMAT, inputs, outputs: result.outputFiles.map((f) => ({ path: basename(f.path), text: f.text })) };
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
  let entry = readCache(file);
  const cached = fresh(entry);
  if (!cached) {
    entry = await bundleRuntime();
    writeCache(file, entry);
  }
  const entries: TarEntry[] = entry!.outputs.map((o) => ({ path: o.path, type: 'file', mode: 0o644, data: Buffer.from(o.text) }));
  return { entries, cli: RUNTIME_FILE, cached, ...(basename(packageRoot) === 'faas-js-runtime' ? { compat: 'faas-js-runtime' as const } : {}) };
}
