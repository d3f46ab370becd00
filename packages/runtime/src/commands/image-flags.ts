/**
 * The image flags `build --image` and `deploy` share. Only yargs definitions here: cli.ts imports
 * every command module at start-up, and what these flags drive (@func/oci) loads when a command runs.
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
    .option('registry-insecure', { type: 'boolean', describe: 'plain HTTP to a registry that is not on this machine' }) as unknown as Argv<T & ImageFlags>;
}
