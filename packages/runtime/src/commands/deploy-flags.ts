/**
 * The flags the image and cluster commands share: the image flags of `build --image` and `deploy`,
 * the cluster flags of `deploy`, `undeploy`, `describe` and `logs`. Only yargs definitions here:
 * cli.ts imports every command module at start-up, and what these flags drive (@func/oci,
 * @func/kube-client) loads when a command runs.
 */
import type { Argv } from 'yargs';

export interface ImageFlags {
  image?: string;
  registry?: string;
  base?: string;
  push?: boolean;
  images?: string;
  username?: string;
  password?: string;
  registryInsecure?: boolean;
  /** false with --no-typecheck. */
  typecheck?: boolean;
}

export function withImageFlags<T>(y: Argv<T>): Argv<T & ImageFlags> {
  return y
    .option('image', { alias: 'i', type: 'string', describe: 'image name [registry/]repository[:tag] [default: func.yaml image, else <registry>/<name>:latest, else localhost/<name>:latest in the local image store]' })
    .option('registry', { alias: 'r', type: 'string', describe: 'registry to push to, [host]/[user]: the image is <registry>/<name>:latest [default: func.yaml registry]' })
    .option('base', { type: 'string', describe: 'base image our layers go on (a Node.js image, pulled from its registry once) [default: func.yaml build.builderImages.host, else none: the node\'s Node.js runs it]' })
    .option('push', { type: 'boolean', describe: 'push to the image\'s registry [deploy: default unless the image is localhost/…; build: default false]' })
    .option('images', { type: 'string', describe: 'OCI image layout to build into [default: FUNC_IMAGES, else the local cluster\'s (the kubeconfig\'s cluster-api data dir)/images, else .func/images]' })
    .option('username', { type: 'string', describe: 'registry user [env FUNC_USERNAME; default: ~/.docker/config.json]' })
    .option('password', { type: 'string', describe: 'registry password [env FUNC_PASSWORD]' })
    .option('registry-insecure', { type: 'boolean', describe: 'plain HTTP to a registry that is not on this machine' })
    .option('typecheck', { type: 'boolean', default: true, describe: 'type-check a TypeScript project (its tsc, its tsconfig.json) beside the bundle and refuse a type error; --no-typecheck ships anyway' }) as unknown as Argv<T & ImageFlags>;
}

export interface ClusterFlags {
  namespace?: string;
  kubeconfig?: string;
  context?: string;
}

/** As kubectl names them. */
export function withClusterFlags<T>(y: Argv<T>): Argv<T & ClusterFlags> {
  return y
    .option('namespace', { alias: 'n', type: 'string', describe: 'namespace [default: func.yaml namespace / deploy.namespace, else the kubeconfig context\'s]' })
    .option('kubeconfig', { type: 'string', describe: 'kubeconfig file [default: KUBECONFIG, else ~/.kube/config]' })
    .option('context', { type: 'string', describe: 'kubeconfig context [default: its current-context]' }) as unknown as Argv<T & ClusterFlags>;
}

/** `--name` of the commands that act on a deployed function, and the project path it defaults from. */
export interface TargetFlags extends ClusterFlags {
  path: string;
  name?: string;
}

export function withTargetFlags<T>(y: Argv<T>): Argv<T & TargetFlags> {
  return withClusterFlags(
    y.positional('path', { type: 'string', default: '.', describe: 'function directory (its func.yaml names the function)' })
      .option('name', { type: 'string', describe: 'the deployed function\'s name [default: func.yaml name]' }),
  ) as unknown as Argv<T & TargetFlags>;
}
