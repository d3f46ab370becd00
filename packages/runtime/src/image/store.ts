/**
 * Where a built image goes: an OCI image layout directory. `--images DIR`, else `FUNC_IMAGES`, else
 * `.func/images` in the project. A deploy pushes from there to a registry: the one named
 * (`--registry`, `--image`, func.yaml), else the one the cluster advertises
 * (deploy/local-registry.ts); a layout given with `--images` that the cluster's node reads (its
 * `<data-dir>/images`) needs no push.
 */
import { join, resolve } from 'node:path';

export type StoreSource = 'flag' | 'env' | 'project';

export interface ImageStoreChoice {
  dir: string;
  source: StoreSource;
}

export interface StoreOptions {
  images?: string;
  env?: NodeJS.ProcessEnv;
  projectDir: string;
}

export function chooseImageStore(options: StoreOptions): ImageStoreChoice {
  const env = options.env ?? process.env;
  if (options.images) return { dir: resolve(options.images), source: 'flag' };
  if (env.FUNC_IMAGES) return { dir: resolve(env.FUNC_IMAGES), source: 'env' };
  return { dir: join(options.projectDir, '.func', 'images'), source: 'project' };
}
