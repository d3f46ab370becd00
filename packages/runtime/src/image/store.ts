/**
 * Where a built image goes when no registry is named: an OCI image layout directory. The local
 * cluster's node agent runs function images from its layout (`cluster-api serve`: <data-dir>/images),
 * so building into that directory is all a deploy to it needs: no registry process on one machine.
 *
 * Which layout: `--images DIR`, else `FUNC_IMAGES`, else the layout of the cluster the kubeconfig
 * names when that kubeconfig is the one `cluster-api serve` wrote into its data directory (beside
 * its `admin.token` and `tls/ca.crt`), else `.func/images` in the project (a build with nowhere
 * better to go; a deploy from there needs a registry).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

export type StoreSource = 'flag' | 'env' | 'cluster' | 'project';

export interface ImageStoreChoice {
  dir: string;
  source: StoreSource;
}

/** The layout of the `cluster-api serve` data directory a kubeconfig file sits in, if it does. */
export function clusterImageStore(kubeconfigFile: string): string | undefined {
  const dir = dirname(resolve(kubeconfigFile));
  const isDataDir = existsSync(join(dir, 'admin.token')) && existsSync(join(dir, 'tls', 'ca.crt'));
  return isDataDir ? join(dir, 'images') : undefined;
}

export interface StoreOptions {
  images?: string;
  env?: NodeJS.ProcessEnv;
  /** The kubeconfig files in use (kubectl's order). */
  kubeconfigFiles?: string[];
  projectDir: string;
}

export function chooseImageStore(options: StoreOptions): ImageStoreChoice {
  const env = options.env ?? process.env;
  if (options.images) return { dir: resolve(options.images), source: 'flag' };
  if (env.FUNC_IMAGES) return { dir: resolve(env.FUNC_IMAGES), source: 'env' };
  for (const file of options.kubeconfigFiles ?? []) {
    const dir = clusterImageStore(file);
    if (dir) return { dir, source: 'cluster' };
  }
  return { dir: join(options.projectDir, '.func', 'images'), source: 'project' };
}
