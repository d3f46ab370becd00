/**
 * Function images: what `func-runtime build --image` produces and the node agent runs. Two layers
 * — the runtime (the same bytes for every function built with the same runtime, so registries and
 * layouts store it once) then the function's bundle — and a config that starts the runtime on the
 * bundle. The format is documented in this package's README ("Function images"); the node agent and
 * `func-runtime deploy` key on the labels below.
 */
import { readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { buildImage, type BuiltImage, mergeEnv } from './build.js';
import { entriesFromDirectory } from './files.js';
import type { ImageLayout } from './layout.js';
import type { TarEntry } from './tar.js';
import type { Descriptor, Platform } from './types.js';

/** The label that marks a function image, and its value. */
export const FUNCTION_IMAGE_LABEL = 'dev.func.image';
export const FUNCTION_IMAGE_KIND = 'function';
/** Where the runtime and the bundle live in the image. */
export const RUNTIME_DIR = '/func/runtime';
export const BUNDLE_DIR = '/func/app';
export const FUNCTION_PORT = 8080;

export interface RuntimeLayer {
  /** The runtime's files, paths relative to RUNTIME_DIR (e.g. from nodePackageEntries). */
  entries: TarEntry[];
  /** The runtime's CLI, relative to RUNTIME_DIR: started as `node <cli> /func/app`. */
  cli: string;
  /**
   * Files for RUNTIME_DIR that only one Node.js can use (V8's code cache of the runtime): a layer of
   * their own between the runtime and the function, so the runtime layer stays the same bytes on
   * every Node.js. `node` is the version they are for (the layer's history says it).
   */
  codeCache?: { node: string; entries: TarEntry[] };
}

export interface FunctionImageOptions {
  /** A `func-runtime build` output directory (index.mjs, package.json, func.yaml…). */
  bundleDir: string;
  runtime: RuntimeLayer;
  /** The function's name (func.yaml `name`). */
  name: string;
  /** func.yaml `runtime` (Knative's label value): default `typescript`. */
  language?: string;
  /** A tag or digest of a base image in the layout (e.g. a Node.js image pulled with pullImage). */
  base?: string | Descriptor;
  tag?: string;
  created?: number;
  platform?: Platform;
  /** Extra labels and env (`NAME=value`), merged over the defaults. */
  labels?: Record<string, string>;
  env?: string[];
}

async function checkBundle(dir: string): Promise<void> {
  const pkg = await readFile(join(dir, 'package.json'), 'utf8').catch(() => undefined);
  const main = pkg === undefined ? undefined : (JSON.parse(pkg) as { main?: unknown }).main;
  if (typeof main !== 'string') {
    throw new Error(`${dir} is not a func-runtime build output (no package.json with "main"); run func-runtime build first`);
  }
  await readFile(join(dir, main)).catch(() => {
    throw new Error(`${dir}: package.json names ${JSON.stringify(main)} as main, but that file is missing; run func-runtime build again`);
  });
}

export function functionLabels(name: string, language: string, cli: string): Record<string, string> {
  return {
    [FUNCTION_IMAGE_LABEL]: FUNCTION_IMAGE_KIND,
    'dev.func.runtime.cli': posix.join(RUNTIME_DIR, cli),
    'dev.func.bundle': BUNDLE_DIR,
    'function.knative.dev/name': name,
    'function.knative.dev/runtime': language,
    'org.opencontainers.image.title': name,
  };
}

export async function buildFunctionImage(layout: ImageLayout, options: FunctionImageOptions): Promise<BuiltImage> {
  await checkBundle(options.bundleDir);
  const cli = posix.normalize(options.runtime.cli);
  if (cli.startsWith('..') || cli.startsWith('/')) throw new Error(`runtime.cli must be a path inside the runtime layer, got ${JSON.stringify(options.runtime.cli)}`);
  // A /tmp every user may write (sticky, as in any base image): what tools in a container expect (`kubectl cp` extracts there).
  const inRuntimeDir = (entries: TarEntry[]) => entries.map((e) => ({ ...e, path: posix.join(RUNTIME_DIR.slice(1), e.path) }));
  const runtimeEntries = [{ path: 'tmp', type: 'dir' as const, mode: 0o1777 }, ...inRuntimeDir(options.runtime.entries)];
  const { codeCache } = options.runtime;
  const bundleEntries = await entriesFromDirectory(options.bundleDir, { prefix: BUNDLE_DIR.slice(1) });
  return buildImage(layout, {
    base: options.base,
    tag: options.tag,
    created: options.created,
    platform: options.platform,
    layers: [
      { entries: runtimeEntries, createdBy: `func-runtime: runtime (${RUNTIME_DIR})` },
      ...(codeCache ? [{ entries: inRuntimeDir(codeCache.entries), createdBy: `func-runtime: code cache for Node.js ${codeCache.node} (${RUNTIME_DIR})` }] : []),
      { entries: bundleEntries, createdBy: `func-runtime: function ${options.name} (${BUNDLE_DIR})` },
    ],
    config: {
      Entrypoint: ['node', posix.join(RUNTIME_DIR, cli)],
      Cmd: [BUNDLE_DIR],
      WorkingDir: BUNDLE_DIR,
      Env: mergeEnv(['NODE_ENV=production', `PORT=${FUNCTION_PORT}`], options.env),
      ExposedPorts: { [`${FUNCTION_PORT}/tcp`]: {} },
      Labels: { ...functionLabels(options.name, options.language ?? 'typescript', cli), ...options.labels },
    },
  });
}
