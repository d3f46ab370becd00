/**
 * The node's images: an OCI image layout (`<data-dir>/images`, where `func-runtime deploy` and
 * `cluster-api` users put function images) plus pulls from registries. How a pod's `image` maps:
 *
 * 1. the layout's tag equal to the reference as written (`hello:v1`, `127.0.0.1:5000/fn/hello:v1`),
 *    or for a reference with neither tag nor digest also `<name>:latest`; a reference with a digest
 *    also matches any manifest of that digest the layout lists;
 * 2. otherwise, when the reference names a registry host (`host[:port]/…`), a pull (by digest when
 *    given) into the layout, tagged with the reference as written; `imagePullPolicy: Always` pulls
 *    such references on every start, `Never` never pulls;
 * 3. otherwise the image is unknown here (a bare Docker Hub name such as `nginx`).
 *
 * A function image (label `dev.func.image=function`) is unpacked once per manifest digest under
 * `<data-dir>/rootfs/<digest>` and shared read-only by every container that runs it.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FUNCTION_IMAGE_KIND, FUNCTION_IMAGE_LABEL, ImageLayout, parseReference, pullImage, resolveImage, unpackImage, type ContainerConfig, type Descriptor } from '@func/oci';

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** The kubelet's image errors: the waiting reason and the message. */
export class ImageError extends Error {
  override readonly name = 'ImageError';
  constructor(readonly reason: 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName', message: string) {
    super(message);
  }
}

export interface Pulled {
  ms: number;
  size: number;
}

export type ImageResolution =
  | { kind: 'function'; imageID: string; config: ContainerConfig; root: string; pulled?: Pulled }
  | { kind: 'other'; imageID?: string; pulled?: Pulled; reason: string };

export interface ImageStoreOptions {
  /** The OCI image layout directory. */
  layout: string;
  /** Where function images are unpacked. */
  rootfs: string;
  /** A pull that takes longer fails (ErrImagePull). */
  pullTimeoutMs?: number;
}

const hasRegistryHost = (ref: string): boolean => {
  const slash = ref.indexOf('/');
  const first = slash < 0 ? '' : ref.slice(0, slash);
  return first.includes('.') || first.includes(':') || first === 'localhost';
};

const repositoryOf = (ref: string): string => {
  const at = ref.indexOf('@');
  const noDigest = at < 0 ? ref : ref.slice(0, at);
  const colon = noDigest.lastIndexOf(':');
  return colon > noDigest.lastIndexOf('/') ? noDigest.slice(0, colon) : noDigest;
};

export class ImageStore {
  private layoutOpened?: Promise<ImageLayout>;
  private cachedIndex?: { mtimeMs: number; size: number; index: Awaited<ReturnType<ImageLayout['readIndex']>> };
  private readonly unpacking = new Map<string, Promise<string>>();

  constructor(private readonly options: ImageStoreOptions) {}

  layout(): Promise<ImageLayout> {
    return (this.layoutOpened ??= ImageLayout.open(this.options.layout));
  }

  /** index.json, read again only when it changed (a node resolves an image per container start). */
  private async index() {
    const layout = await this.layout();
    const { mtimeMs, size } = await stat(join(layout.dir, 'index.json'));
    if (this.cachedIndex?.mtimeMs !== mtimeMs || this.cachedIndex.size !== size) this.cachedIndex = { mtimeMs, size, index: await layout.readIndex() };
    return this.cachedIndex.index;
  }

  /** Whether a reference is a function image without pulling anything: `unknown` when only a pull can tell. */
  async classify(ref: string): Promise<'function' | 'other' | 'unknown'> {
    const descriptor = await this.local(ref);
    if (!descriptor) return hasRegistryHost(ref) ? 'unknown' : 'other';
    const { config } = await resolveImage(await this.layout(), descriptor);
    return config.config?.Labels?.[FUNCTION_IMAGE_LABEL] === FUNCTION_IMAGE_KIND ? 'function' : 'other';
  }

  /** The layout's manifest for a reference, by the rules above (1). */
  private async local(ref: string): Promise<Descriptor | undefined> {
    const index = await this.index();
    const names = [ref];
    const last = ref.slice(ref.lastIndexOf('/') + 1);
    if (!ref.includes('@') && !last.includes(':')) names.push(`${ref}:latest`);
    const digest = ref.includes('@') ? ref.slice(ref.indexOf('@') + 1) : undefined;
    for (const name of names) {
      const found = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === name);
      if (found) return found;
    }
    return digest ? index.manifests.find((m) => m.digest === digest) : undefined;
  }

  private async pull(ref: string): Promise<{ descriptor: Descriptor; pulled: Pulled }> {
    const started = Date.now();
    let parsed;
    try {
      parsed = parseReference(ref);
    } catch (err) {
      throw new ImageError('InvalidImageName', `Failed to apply default image tag "${ref}": ${(err as Error).message}`);
    }
    const layout = await this.layout();
    const timeout = this.options.pullTimeoutMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const descriptor = await Promise.race([
        pullImage(parsed, layout, { tag: ref }),
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`pull timed out after ${timeout / 1000}s`)), timeout))),
      ]);
      const { manifest } = await resolveImage(layout, descriptor);
      const size = manifest.layers.reduce((n, l) => n + l.size, manifest.config.size);
      return { descriptor, pulled: { ms: Date.now() - started, size } };
    } catch (err) {
      throw new ImageError('ErrImagePull', `failed to pull and unpack image "${ref}": ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** `pulling` is called before a pull starts (the kubelet's Pulling event). */
  async resolve(ref: string, policy: PullPolicy = 'IfNotPresent', pulling?: () => void): Promise<ImageResolution> {
    let descriptor = policy === 'Always' && hasRegistryHost(ref) ? undefined : await this.local(ref);
    let pulled: Pulled | undefined;
    if (!descriptor) {
      if (policy === 'Never') throw new ImageError('ErrImageNeverPull', `Container image "${ref}" is not present with pull policy of Never`);
      if (!hasRegistryHost(ref)) return { kind: 'other', reason: 'not in this node\'s image store' };
      pulling?.();
      ({ descriptor, pulled } = await this.pull(ref));
    }
    const layout = await this.layout();
    const { config } = await resolveImage(layout, descriptor);
    const imageID = `${repositoryOf(ref)}@${descriptor.digest}`;
    const labels = config.config?.Labels ?? {};
    if (labels[FUNCTION_IMAGE_LABEL] !== FUNCTION_IMAGE_KIND) return { kind: 'other', imageID, pulled, reason: `it has no label ${FUNCTION_IMAGE_LABEL}=${FUNCTION_IMAGE_KIND}` };
    return { kind: 'function', imageID, config: config.config ?? {}, root: await this.unpacked(descriptor), pulled };
  }

  /** The image unpacked under rootfs/, once per digest (a finished directory is never written again). */
  private unpacked(descriptor: Descriptor): Promise<string> {
    const hex = descriptor.digest.replace(/^sha256:/, '');
    const dest = join(this.options.rootfs, hex);
    let p = this.unpacking.get(hex);
    if (!p) {
      p = (async () => {
        if (await stat(dest).then(() => true, () => false)) return dest;
        await mkdir(this.options.rootfs, { recursive: true });
        const tmp = `${dest}.${randomBytes(4).toString('hex')}.tmp`;
        try {
          await unpackImage(await this.layout(), descriptor, tmp);
          await rename(tmp, dest);
        } finally {
          await rm(tmp, { recursive: true, force: true });
        }
        return dest;
      })();
      this.unpacking.set(hex, p);
      p.catch(() => this.unpacking.delete(hex));
    }
    return p;
  }
}
