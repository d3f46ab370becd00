/**
 * How a container of a function image becomes a process, as a container runtime would run it:
 * `command` replaces the image's Entrypoint and `args` its Cmd (a `command` alone drops Cmd), both
 * with `$(VAR)` expanded against the container's environment; the image's Env comes first and the
 * container's wins. Paths the container names are rewritten to where they are on the node: under a
 * mountPath → the mount root (mounts.ts), else inside the image → its unpacked root. The program
 * must be Node.js (`node`): it is the node's own `node`, and nothing else runs here; its V8 heap is
 * bounded by the container's memory limit (`heapLimit`).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { basename, isAbsolute, join, normalize } from 'node:path';
import type { ContainerConfig } from '@func/oci';
import { parseQuantity } from '../../../api/quantity.js';
import { expand } from '../../pods/env.js';
import { CreateContainerError, type ContainerConfig as CriContainerConfig } from '../cri.js';
import type { MountRoot } from './mount-root.js';
import type { LaunchSpec } from './process.js';

export interface LaunchInput {
  container: Pick<CriContainerConfig, 'command' | 'args' | 'workingDir'> & { container?: { resources?: { limits?: Record<string, string | number> } } };
  image: ContainerConfig;
  /** The unpacked image. */
  imageRoot: string;
  mounts: MountRoot;
  /** The container's environment, built by env.ts (the image's Env not yet in it). */
  env: Record<string, string>;
  /** Set last: the node's own variables (FUNC_HOST, HOSTNAME, FUNC_MOUNT_ROOT…). */
  fixed: Record<string, string>;
}

export const imageEnv = (config: ContainerConfig): Record<string, string> =>
  Object.fromEntries((config.Env ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]).filter(([k]) => k));

const isNode = (program: string): boolean => program === 'node' || basename(program) === 'node';

/** What the container runs: `command` replaces Entrypoint and `args` Cmd, `$(VAR)` expanded against `env`; CreateContainerError when it is nothing. */
export function containerArgv(container: Pick<CriContainerConfig, 'command' | 'args'>, image: ContainerConfig, env: Record<string, string>): string[] {
  const expanded = (list: string[]) => list.map((a) => expand(a, (name) => env[name]));
  const entrypoint = container.command ? expanded(container.command) : (image.Entrypoint ?? []);
  const cmd = container.args ? expanded(container.args) : container.command ? [] : (image.Cmd ?? []);
  const argv = [...entrypoint, ...cmd];
  if (argv.length === 0) throw new CreateContainerError('no command specified');
  return argv;
}

export function launchSpec(input: LaunchInput): LaunchSpec {
  const { container, image, imageRoot, mounts } = input;
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin', ...imageEnv(image), ...input.env };
  const argv = containerArgv(container, image, env);
  if (!isNode(argv[0]!)) throw new CreateContainerError(`only Node.js programs run on this node: command ${JSON.stringify(argv[0])} is not "node"`);
  const onNode = (p: string): string => {
    const mapped = mounts.hostPath(p);
    if (mapped !== p || !isAbsolute(p)) return mapped;
    const inImage = join(imageRoot, normalize(p));
    return existsSync(inImage) ? inImage : p;
  };
  for (const [k, v] of Object.entries(env)) env[k] = mounts.hostPath(v);
  Object.assign(env, input.fixed, { FUNC_MOUNT_ROOT: mounts.root });
  return { args: [...heapLimit(container.container?.resources?.limits?.memory, env.NODE_OPTIONS), ...argv.slice(1).map(onNode)], env, cwd: workingDir(container.workingDir ?? image.WorkingDir ?? '/', onNode, mounts) };
}

/**
 * The V8 heap a process may grow to under `limits.memory` (no cgroup holds a process here, so
 * Node.js cannot size its heap from one): `--max-old-space-size` at three quarters of the limit,
 * leaving room for code, stacks and buffers; a program's own flag (in its args, which come after,
 * or NODE_OPTIONS) wins.
 */
export function heapLimit(memory: string | number | undefined, nodeOptions = ''): string[] {
  const bytes = parseQuantity(memory);
  if (!bytes || nodeOptions.includes('--max-old-space-size')) return [];
  return [`--max-old-space-size=${Math.max(16, Math.floor((bytes * 0.75) / (1024 * 1024)))}`];
}

/** The working directory on the node; one neither mounted nor in the image is made in the mount root, as a runtime makes it. */
function workingDir(dir: string, onNode: (p: string) => string, mounts: MountRoot): string {
  const mapped = onNode(dir);
  if (mapped !== dir || dir === '/') return dir === '/' ? mounts.root : mapped;
  const made = join(mounts.root, normalize(dir));
  mkdirSync(made, { recursive: true });
  return made;
}
