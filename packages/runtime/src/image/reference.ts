/**
 * The function's image name, chosen as Knative's func chooses it: `--image`, else `--registry` +
 * name, else func.yaml `image`, else func.yaml `registry` + name — plus one default of our own: a
 * function with none of these lives in the local image store as `localhost/<name>:latest`
 * (podman's name for images that never left the machine), which is never pushed.
 */
import { CommandError } from '../command-error.js';

export interface ImageChoice {
  image?: string;
  registry?: string;
}

export const LOCAL_HOST = 'localhost';

/** `registry/name:latest`, with a registry of `[host]/[user]` and no trailing slash needed. */
const inRegistry = (registry: string, name: string) => `${registry.replace(/\/+$/, '')}/${name}:latest`;

export async function imageReference(name: string, flags: ImageChoice, yaml: ImageChoice): Promise<string> {
  const ref = flags.image || (flags.registry ? inRegistry(flags.registry, name) : undefined) || yaml.image || (yaml.registry ? inRegistry(yaml.registry, name) : `${LOCAL_HOST}/${name}:latest`);
  await checkReference(ref);
  return ref;
}

/** Docker's grammar, as Kubernetes and registries apply it; a bad name is refused before any build. */
export async function checkReference(ref: string): Promise<void> {
  const { parseReference } = await import('@func/oci');
  let problem = ref.includes('@') ? 'give a tag, not a digest (the digest is what the build produces)' : undefined;
  try {
    if (!problem) parseReference(ref);
  } catch (err) {
    problem = (err as Error).message.replace(/^Invalid image reference "[^"]*": /, '');
  }
  if (problem) throw new CommandError(`Invalid image name ${JSON.stringify(ref)}: ${problem}. Use [registry/]repository[:tag], e.g. 127.0.0.1:5000/fn/hello:latest.`);
}

/** `host/repo` without tag or digest. */
export function repositoryOf(ref: string): string {
  const noDigest = ref.split('@')[0]!;
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
}

/** What a Deployment names: the repository pinned to the built digest (Knative's ImageWithDigest). */
export const pinnedReference = (ref: string, digest: string): string => `${repositoryOf(ref)}@${digest}`;

/** An image only the local store holds: nothing to push, the node reads the layout. */
export const isLocalOnly = (ref: string): boolean => ref.startsWith(`${LOCAL_HOST}/`);
