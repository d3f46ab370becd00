/**
 * `func-runtime build --image` and the first half of `deploy`, as one pipeline:
 *
 *   source ──esbuild──▶ .func/build (bundle + func.yaml) ─┐
 *   func-runtime ──esbuild, cached──▶ runtime layer ──────┼─▶ image in the layout ──▶ push (optional)
 *   base image (optional, pulled once into the layout) ───┘
 *
 * Reproducible: the same source and runtime give the same digest (fixed timestamps, sorted
 * entries; func.yaml's bookkeeping fields, which deploy rewrites, are left out of the image). The
 * image is tagged with its name and with `<repository>@<digest>`, so a node (or a rollback) can
 * still find an earlier digest after the name moves on.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PushResult, RegistryOptions } from '@func/oci';
import { formatDiagnostics, typeCheck, type TypeCheck } from '../dev/typecheck.js';
import { buildBundle } from '../dev/build-bundle.js';
import { sourceEntry, type FunctionProject } from '../project.js';
import { pinnedReference } from './reference.js';
import { CommandError } from '../command-error.js';
import { quietSteps, type Steps } from '../deploy/progress.js';
import { registryFailure } from './registry-failure.js';
import { runtimeLayer } from './runtime-layer.js';

export interface ImageBuildRequest {
  project: FunctionProject;
  /** The image's name (tag), e.g. `localhost/hello:latest` or `127.0.0.1:5000/fn/hello:latest`. */
  ref: string;
  /** The OCI layout directory the image is built into. */
  store: string;
  /** A base image (a Node.js image): our layers go on top of it, so it runs on any Kubernetes. */
  base?: string;
  push: boolean;
  registry?: RegistryOptions;
  /** Type-check the project beside the bundle and refuse a type error (default true; `--no-typecheck`). */
  typecheck?: boolean;
}

export interface BuiltFunctionImage {
  ref: string;
  digest: string;
  /** `repository@digest`: what a Deployment names. */
  pinned: string;
  store: string;
  pushed?: PushResult;
  /** What the type check found (absent: not asked for). */
  typecheck?: TypeCheck;
  /** Milliseconds per step. */
  timings: Record<string, number>;
}

/** Keys deploy writes back into func.yaml: kept out of the image so that writing them changes no digest. */
const BOOKKEEPING = ['image', 'imageDigest', 'registry', 'namespace'] as const;

async function writeImageFuncYaml(project: FunctionProject, bundleDir: string): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const { parseDocument } = await import('yaml');
  const doc = parseDocument(readFileSync(project.file, 'utf8'));
  for (const key of BOOKKEEPING) doc.delete(key);
  if (doc.hasIn(['deploy', 'image'])) doc.deleteIn(['deploy', 'image']);
  if (doc.hasIn(['deploy', 'namespace'])) doc.deleteIn(['deploy', 'namespace']);
  writeFileSync(join(bundleDir, 'func.yaml'), doc.toString());
}

/** Native addons cannot be bundled: their installed packages go into the function layer beside the bundle. */
async function copyExternals(project: FunctionProject, bundleDir: string, externals: string[]): Promise<void> {
  if (externals.length === 0) return;
  const { nodePackageEntries } = await import('@func/oci');
  const { mkdirSync } = await import('node:fs');
  for (const name of externals) {
    for (const e of await nodePackageEntries(name, project.dir)) {
      const to = join(bundleDir, e.path);
      if (e.type === 'dir') mkdirSync(to, { recursive: true });
      else if (e.type === 'file') {
        mkdirSync(join(to, '..'), { recursive: true });
        writeFileSync(to, e.data ?? Buffer.alloc(0), { mode: e.mode });
      }
    }
  }
}

function timer() {
  const timings: Record<string, number> = {};
  let last = performance.now();
  return {
    timings,
    lap(step: string) {
      const now = performance.now();
      timings[step] = Math.round(now - last);
      last = now;
    },
  };
}

/** The type check's outcome; a type error ends the build (the bundle would ship it). */
export async function refuseTypeErrors(checking: Promise<TypeCheck> | undefined): Promise<TypeCheck | undefined> {
  const check = await checking;
  if (check?.status === 'failed') {
    throw new CommandError(`${check.count} type error${check.count === 1 ? '' : 's'}; fix ${check.count === 1 ? 'it' : 'them'}, or pass --no-typecheck to ship anyway:\n${formatDiagnostics(check)}`);
  }
  return check;
}

/** `progress` shows each step that takes over a second (deploy/progress.ts). */
export async function buildFunctionImageFromSource(request: ImageBuildRequest, progress: Steps = quietSteps): Promise<BuiltFunctionImage> {
  const { project } = request;
  const clock = timer();
  const bundleDir = join(project.dir, '.func', 'build');
  rmSync(bundleDir, { recursive: true, force: true });
  const checking = request.typecheck === false ? undefined : typeCheck(project.dir);
  checking?.catch(() => undefined);
  const [bundle, runtime, oci] = await progress.run('bundling', Promise.all([buildBundle(sourceEntry(project.dir), bundleDir), runtimeLayer(), import('@func/oci')]));
  const typecheck = await progress.run('type-checking', refuseTypeErrors(checking));
  await writeImageFuncYaml(project, bundleDir);
  await copyExternals(project, bundleDir, bundle.externals);
  clock.lap('bundle');
  const layout = await oci.ImageLayout.open(request.store);
  if (request.base && !(await layout.resolve(request.base).then(() => true, () => false))) {
    await progress.run(`pulling the base image ${request.base}`, oci.pullImage(request.base, layout, { ...request.registry, tag: request.base })).catch((err: unknown) => {
      throw registryFailure(err, `pull the base image ${request.base}`);
    });
    clock.lap('pullBase');
  }
  // A base image brings its own Node.js, whose V8 would refuse a code cache made by this one.
  const runtimeFiles = request.base ? { ...runtime, codeCache: undefined } : runtime;
  const image = await progress.run('writing the image', oci.buildFunctionImage(layout, {
    bundleDir, runtime: runtimeFiles, name: project.name, language: project.doc.runtime, base: request.base, tag: request.ref,
    env: runtime.compat ? [`FUNC_COMPAT=${runtime.compat}`] : undefined,
  }));
  const pinned = pinnedReference(request.ref, image.digest);
  await layout.tag(pinned, image.descriptor);
  clock.lap('image');
  let pushed: PushResult | undefined;
  if (request.push) {
    pushed = await progress.run(`pushing ${request.ref}`, oci.pushImage(layout, image.descriptor, request.ref, request.registry)).catch((err: unknown) => {
      throw registryFailure(err, `push ${request.ref}`);
    });
    clock.lap('push');
  }
  return { ref: request.ref, digest: image.digest, pinned, store: layout.dir, pushed, typecheck, timings: clock.timings };
}
