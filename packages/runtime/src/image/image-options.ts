/**
 * The image flags `build --image` and `deploy` share (commands/deploy-flags.ts), resolved into one
 * build request: which name, which layout, whether to push, which base, which credentials.
 */
import type { RegistryOptions } from '@func/oci';
import type { LocalRegistry } from '../deploy/local-registry.js';
import { CommandError } from '../command-error.js';
import type { ImageFlags } from '../commands/deploy-flags.js';
import type { FunctionProject } from '../project.js';
import type { ImageBuildRequest } from './build-image.js';
import { imageReference, isLocalOnly, LOCAL_HOST } from './reference.js';
import { chooseImageStore, type StoreSource } from './store.js';

export interface ResolvedImageRequest extends ImageBuildRequest {
  storeSource: StoreSource;
}

function registryOptions(flags: ImageFlags, env: NodeJS.ProcessEnv, ref: string, local: LocalRegistry | undefined): RegistryOptions {
  const username = flags.username ?? env.FUNC_USERNAME;
  const password = flags.password ?? env.FUNC_PASSWORD;
  if ((username === undefined) !== (password === undefined)) throw new CommandError('Registry credentials need both a user and a password: pass --username with --password (or FUNC_USERNAME with FUNC_PASSWORD).');
  // The cluster's own registry takes the kubeconfig's token (as the password of any user).
  const toCluster = username === undefined && local?.token && ref.startsWith(`${local.host}/`);
  const credentials = username !== undefined ? { username, password: password! } : toCluster ? { username: 'kubeconfig', password: local.token! } : undefined;
  return { ...(credentials && { credentials }), ...(flags.registryInsecure ? { insecure: true } : {}) };
}

/**
 * `localRegistry`: the registry the cluster advertises (deploy). An image that would only live in the
 * local store (`localhost/<name>`: no registry named anywhere) goes there instead when no layout was
 * chosen (`--images`, FUNC_IMAGES): `<host>/<name>`, pushed with the kubeconfig's token.
 */
export async function resolveImageRequest(project: FunctionProject, flags: ImageFlags, opts: { pushByDefault: boolean; env?: NodeJS.ProcessEnv; localRegistry?: LocalRegistry }): Promise<ResolvedImageRequest> {
  const env = opts.env ?? process.env;
  const store = chooseImageStore({ images: flags.images, env, projectDir: project.dir });
  const named = await imageReference(project.name, flags, project.doc);
  const local = opts.localRegistry;
  const ref = local && store.source === 'project' && isLocalOnly(named) ? `${local.host}/${named.slice(LOCAL_HOST.length + 1)}` : named;
  const push = flags.push ?? (opts.pushByDefault && !isLocalOnly(ref));
  if (push && isLocalOnly(ref)) throw new CommandError(`${ref} names the local image store (localhost/…), which has no registry to push to. Pass --registry <host>/<user> or --image <host>/<repository>:<tag>.`);
  const base = flags.base ?? project.doc.build?.builderImages?.host;
  return { project, ref, store: store.dir, storeSource: store.source, push, base, registry: registryOptions(flags, env, ref, local), typecheck: flags.typecheck !== false };
}
