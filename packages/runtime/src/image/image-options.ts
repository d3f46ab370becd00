/**
 * The image flags `build --image` and `deploy` share (commands/deploy-flags.ts), resolved into one
 * build request: which name, which layout, whether to push, which base, which credentials.
 */
import type { RegistryOptions } from '@func/oci';
import { CommandError } from '../command-error.js';
import type { ImageFlags } from '../commands/deploy-flags.js';
import type { FunctionProject } from '../project.js';
import type { ImageBuildRequest } from './build-image.js';
import { imageReference, isLocalOnly } from './reference.js';
import { chooseImageStore, type StoreSource } from './store.js';

export interface ResolvedImageRequest extends ImageBuildRequest {
  storeSource: StoreSource;
}

function registryOptions(flags: ImageFlags, env: NodeJS.ProcessEnv): RegistryOptions {
  const username = flags.username ?? env.FUNC_USERNAME;
  const password = flags.password ?? env.FUNC_PASSWORD;
  if ((username === undefined) !== (password === undefined)) throw new CommandError('Registry credentials need both a user and a password: pass --username with --password (or FUNC_USERNAME with FUNC_PASSWORD).');
  return { ...(username !== undefined ? { credentials: { username, password: password! } } : {}), ...(flags.registryInsecure ? { insecure: true } : {}) };
}

export async function resolveImageRequest(project: FunctionProject, flags: ImageFlags, opts: { kubeconfigFiles?: string[]; pushByDefault: boolean; env?: NodeJS.ProcessEnv }): Promise<ResolvedImageRequest> {
  const env = opts.env ?? process.env;
  const ref = await imageReference(project.name, flags, project.doc);
  const store = chooseImageStore({ images: flags.images, env, kubeconfigFiles: opts.kubeconfigFiles, projectDir: project.dir });
  const push = flags.push ?? (opts.pushByDefault && !isLocalOnly(ref));
  if (push && isLocalOnly(ref)) throw new CommandError(`${ref} names the local image store (localhost/…), which has no registry to push to. Pass --registry <host>/<user> or --image <host>/<repository>:<tag>.`);
  const base = flags.base ?? project.doc.build?.builderImages?.host;
  return { project, ref, store: store.dir, storeSource: store.source, push, base, registry: registryOptions(flags, env), typecheck: flags.typecheck !== false };
}
