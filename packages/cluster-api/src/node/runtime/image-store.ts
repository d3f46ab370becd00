/**
 * The node's image store, the CRI image service every runtime of this node runs images from: an
 * OCI image layout (`<data-dir>/images`, where `func-runtime deploy` and `cluster-api` users put
 * function images) plus pulls from registries. A pod's `image` is found:
 *
 * 1. by the layout's tag equal to the reference as written (`hello:v1`, `127.0.0.1:5000/fn/hello:v1`),
 *    or for a reference with neither tag nor digest also `<name>:latest`; a reference with a digest
 *    also matches any manifest of that digest the layout lists;
 * 2. otherwise, when the reference names a registry host (`host[:port]/…`), it can be pulled (by
 *    digest when given) into the layout, tagged with the reference as written (the pull policy is
 *    the agent's: pods/image-pull.ts);
 * 3. otherwise it is unknown here (a bare Docker Hub name such as `nginx`).
 *
 * Where overlayfs stacks layers on this node (./overlay.ts), each layer is unpacked once, keyed by
 * its diff_id (the digest of the uncompressed tar, so one content gzip'd two ways is one layer),
 * under `<data-dir>/layers/<diff_id hex>` as an overlayfs lower layer, shared read-only by every
 * image that lists it and every container of those images (rootfsImage). Otherwise, and for the
 * process runtime (which runs from a plain directory), an image is unpacked whole once per manifest
 * digest under `<data-dir>/rootfs/<digest>` (unpackedImage). Either is unpacked into a temporary
 * name and renamed into place, so no half-unpacked directory is ever seen, and concurrent asks for
 * one layer or image share one unpack. collectGarbage removes what no image references any more.
 *
 * A manifest and its config are read (and their digests checked) once per digest, while the layout
 * lists it: content-addressed, they never change, and a container start asks for them several times
 * (which runtime, the pull policy, the launch).
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Image, ImageService, ImageSpec } from './cri.js';
import { collectGarbage, ImageLayout, parseReference, pullImage, resolveImage, type ContainerConfig, type Descriptor, type Digest, type ResolvedImage } from '@func/oci';
import { overlaySupported } from './overlay.js';
import { unpackInWorker, unpackLayerInWorker } from './unpack.js';

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/** The kubelet's image errors: the waiting reason and the message. */
export class ImageError extends Error {
  override readonly name = 'ImageError';
  constructor(readonly reason: 'ErrImagePull' | 'ErrImageNeverPull' | 'InvalidImageName', message: string) {
    super(message);
  }
}

/** An image as a runtime runs it: its config and where it is unpacked. */
export interface UnpackedImage {
  config: ContainerConfig;
  root: string;
}

/** An image as an overlay mounts it: its config and its layers, lowest first (one directory, the whole image, where `overlay` is false). */
export interface RootfsImage {
  config: ContainerConfig;
  layers: string[];
  overlay: boolean;
}

export interface ImageStoreOptions {
  /** The OCI image layout directory. */
  layout: string;
  /** Where whole images are unpacked. */
  rootfs: string;
  /** Where layers are unpacked, one directory per diff_id. */
  layers: string;
  /** Whether layers are stacked with overlayfs (default: found by trying it under `layers`). */
  overlay?: boolean;
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

const imageSize = (manifest: { config: { size: number }; layers: { size: number }[] }): number => manifest.layers.reduce((n, l) => n + l.size, manifest.config.size);

/** The node's image store: the CRI image service every runtime of this node reads its images from. */
export class ImageStore implements ImageService {
  private layoutOpened?: Promise<ImageLayout>;
  private cachedIndex?: { mtimeMs: number; size: number; index: Awaited<ReturnType<ImageLayout['readIndex']>> };
  private readonly unpacking = new Map<string, Promise<string>>();
  /** Directories being unpacked now (collectGarbage leaves them). */
  private readonly inFlight = new Set<string>();
  /** Manifests and configs read, by manifest digest (those the layout no longer lists are dropped when index.json changes). */
  private readonly resolved = new Map<Descriptor['digest'], Promise<ResolvedImage>>();

  /** The digests of the images the node's containers use now (set by the node agent): collectGarbage keeps their unpacked roots even once untagged. */
  inUse?: () => Promise<Set<string>>;

  constructor(private readonly options: ImageStoreOptions) {}

  layout(): Promise<ImageLayout> {
    return (this.layoutOpened ??= ImageLayout.open(this.options.layout));
  }

  /** index.json, read again only when it changed (a node resolves an image per container start; one stat, made at once, tells). */
  private async index() {
    const layout = await this.layout();
    const { mtimeMs, size } = statSync(join(layout.dir, 'index.json'));
    if (this.cachedIndex?.mtimeMs !== mtimeMs || this.cachedIndex.size !== size) {
      const index = await layout.readIndex();
      this.cachedIndex = { mtimeMs, size, index };
      const listed = new Set<string>(index.manifests.map((m) => m.digest));
      for (const digest of this.resolved.keys()) if (!listed.has(digest)) this.resolved.delete(digest);
    }
    return this.cachedIndex.index;
  }

  /** The manifest and config of a manifest the layout lists (read once per digest). */
  private resolve(descriptor: Descriptor): Promise<ResolvedImage> {
    let p = this.resolved.get(descriptor.digest);
    if (!p) {
      p = this.layout().then((layout) => resolveImage(layout, descriptor));
      this.resolved.set(descriptor.digest, p);
      p.catch(() => this.resolved.delete(descriptor.digest));
    }
    return p;
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

  pullable(image: ImageSpec): boolean {
    return hasRegistryHost(image.image);
  }

  /** Pulls into the layout (by digest when given; plain HTTP only for loopback registries), tagged with the reference as written. */
  async pullImage(image: ImageSpec): Promise<{ imageRef: string; size: number }> {
    const ref = image.image;
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
      return { imageRef: `${repositoryOf(ref)}@${descriptor.digest}`, size: imageSize(manifest) };
    } catch (err) {
      throw new ImageError('ErrImagePull', `failed to pull and unpack image "${ref}": ${(err as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  async imageStatus(image: ImageSpec): Promise<Image | undefined> {
    const descriptor = await this.local(image.image);
    return descriptor && this.describe(descriptor, image.image);
  }

  private async describe(descriptor: Descriptor, ref: string): Promise<Image> {
    const { manifest, config } = await this.resolve(descriptor);
    const index = await this.index();
    const repoTags = index.manifests.filter((m) => m.digest === descriptor.digest).map((m) => m.annotations?.['org.opencontainers.image.ref.name']).filter((t): t is string => !!t);
    return { id: `${repositoryOf(ref)}@${descriptor.digest}`, repoTags, size: imageSize(manifest), labels: config.config?.Labels ?? {} };
  }

  async listImages(): Promise<Image[]> {
    const index = await this.index();
    return Promise.all(index.manifests.map((m) => this.describe(m, m.annotations?.['org.opencontainers.image.ref.name'] ?? m.digest)));
  }

  /** Untags the reference, then removes the blobs, layers and unpacked images no image references any more. */
  async removeImage(image: ImageSpec): Promise<void> {
    await (await this.layout()).untag(image.image);
    await collectGarbage(await this.layout());
    await this.collectGarbage();
  }

  /** Whether this node's containers stack layers with overlayfs. */
  overlay(): Promise<boolean> {
    return this.options.overlay !== undefined ? Promise.resolve(this.options.overlay) : overlaySupported(this.options.layers);
  }

  /** The image's config and its layers as an overlay stacks them (each unpacked once per diff_id), or the image unpacked whole where overlayfs does not. */
  async rootfsImage(ref: string): Promise<RootfsImage> {
    if (!(await this.overlay())) {
      const { config, root } = await this.unpackedImage(ref);
      return { config, layers: [root], overlay: false };
    }
    const descriptor = await this.local(ref);
    if (!descriptor) throw new ImageError('ErrImagePull', `image "${ref}" is not in this node's image store`);
    const { manifest, config } = await this.resolve(descriptor);
    const diffIds = config.rootfs.diff_ids;
    if (diffIds.length !== manifest.layers.length) throw new Error(`image "${ref}" lists ${manifest.layers.length} layers and ${diffIds.length} diff_ids`);
    // Every unpack settles before an answer, a failure included: nothing is left being written.
    const unpacked = await Promise.allSettled(manifest.layers.map((layer, i) => this.unpackedLayer(layer, diffIds[i]!)));
    const failed = unpacked.find((u) => u.status === 'rejected');
    if (failed) throw failed.reason;
    return { config: config.config ?? {}, layers: unpacked.map((u) => (u as PromiseFulfilledResult<string>).value), overlay: true };
  }

  /** The layer unpacked under layers/, once per diff_id. */
  private unpackedLayer(layer: Descriptor, diffId: Digest): Promise<string> {
    return this.once(this.options.layers, diffId, (tmp) => unpackLayerInWorker(this.options.layout, layer, diffId, tmp));
  }

  /**
   * Removes the unpacked layers and images that no image of the layout references, that no mounted
   * overlay uses (a container of an image removed since), that no container runs from (`inUse`: a
   * process pod of an image retagged since) and that are not being unpacked now; and
   * temporary directories an interrupted unpack left. Returns the directories removed.
   */
  async collectGarbage(): Promise<string[]> {
    const layout = await this.layout();
    const keep = new Set<string>();
    for (const digest of (await this.inUse?.()) ?? []) keep.add(digest.replace(/^sha256:/, ''));
    for (const m of (await layout.readIndex()).manifests) {
      keep.add(m.digest.replace(/^sha256:/, ''));
      const image = await resolveImage(layout, m).catch(() => undefined);
      for (const d of image?.config.rootfs.diff_ids ?? []) keep.add(d.replace(/^sha256:/, ''));
    }
    const mounts = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
    const removed: string[] = [];
    for (const dir of [this.options.layers, this.options.rootfs]) {
      for (const name of await readdir(dir).catch(() => [])) {
        const path = join(dir, name);
        const hex = name.slice(0, 64);
        if (!/^[0-9a-f]{64}/.test(name) || keep.has(name) || this.inFlight.has(path) || (name === hex && mounts.includes(hex))) continue;
        this.unpacking.delete(path);
        await rm(path, { recursive: true, force: true });
        removed.push(path);
      }
    }
    return removed;
  }

  /** The image's config and unpacked root (once per digest), by the reference the pod names. */
  async unpackedImage(ref: string): Promise<UnpackedImage> {
    const descriptor = await this.local(ref);
    if (!descriptor) throw new ImageError('ErrImagePull', `image "${ref}" is not in this node's image store`);
    const { config } = await this.resolve(descriptor);
    return { config: config.config ?? {}, root: await this.unpacked(descriptor) };
  }

  /** The image unpacked under rootfs/, once per digest. */
  private unpacked(descriptor: Descriptor): Promise<string> {
    return this.once(this.options.rootfs, descriptor.digest, (tmp) => unpackInWorker(this.options.layout, descriptor, tmp));
  }

  /**
   * `<dir>/<digest hex>`, made by `unpack` into a temporary name then renamed into place, once: a
   * finished directory is never written again; asks while it is being made share that one unpack,
   * and should another process have renamed its own into place first, that one is kept.
   */
  private once(dir: string, digest: Digest, unpack: (tmp: string) => Promise<void>): Promise<string> {
    const dest = join(dir, digest.replace(/^sha256:/, ''));
    let p = this.unpacking.get(dest);
    if (!p) {
      p = (async () => {
        if (await stat(dest).then(() => true, () => false)) return dest;
        await mkdir(dir, { recursive: true });
        const tmp = `${dest}.${randomBytes(4).toString('hex')}.tmp`;
        this.inFlight.add(tmp);
        try {
          await unpack(tmp);
          await rename(tmp, dest).catch(async (err: NodeJS.ErrnoException) => {
            if (!(await stat(dest).then(() => true, () => false))) throw err;
          });
        } finally {
          await rm(tmp, { recursive: true, force: true });
          this.inFlight.delete(tmp);
        }
        return dest;
      })();
      this.unpacking.set(dest, p);
      p.catch(() => this.unpacking.delete(dest));
    }
    return p;
  }
}
