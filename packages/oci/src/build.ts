/**
 * Building an image: our layers (optionally on top of a base image already in the layout), an
 * image config per image-spec 1.1, a manifest, all stored content-addressed. Everything that goes
 * into a digest is a function of the inputs, so the same inputs give the same manifest digest.
 */
import { jsonBytes } from './digest.js';
import { resolveImage } from './image-source.js';
import { buildLayer, type LayerSpec, sourceDateEpoch } from './layer.js';
import type { ImageLayout } from './layout.js';
import { MediaType } from './media-types.js';
import { hostPlatform } from './platform.js';
import type { ContainerConfig, Descriptor, Digest, HistoryEntry, ImageConfig, ImageManifest, Platform } from './types.js';

export interface BuildOptions {
  layers: LayerSpec[];
  /** Entrypoint, Cmd, Env, WorkingDir, ExposedPorts, Labels, User…; merged over the base's. */
  config?: ContainerConfig;
  /** A tag or manifest digest of an image in the same layout to build on (see pullImage). */
  base?: string | Descriptor;
  /** Default: linux and the running machine's architecture; ignored with a base (the base's platform). */
  platform?: Platform;
  /** Seconds since the epoch for layer mtimes and `created`; default SOURCE_DATE_EPOCH or 0. */
  created?: number;
  annotations?: Record<string, string>;
  /** Tag the result in the layout's index.json. */
  tag?: string;
  gzipLevel?: number;
}

export interface BuiltImage {
  /** The manifest's descriptor: its digest is the image's identity. */
  descriptor: Descriptor;
  manifest: ImageManifest;
  config: ImageConfig;
  digest: Digest;
}

/** Env entries merged by name: ours replace the base's value for the same variable, order kept. */
export function mergeEnv(base: string[] = [], ours: string[] = []): string[] {
  const key = (e: string) => e.split('=', 1)[0]!;
  const names = new Set(ours.map(key));
  return [...base.filter((e) => !names.has(key(e))), ...ours];
}

function mergeConfig(base: ContainerConfig = {}, ours: ContainerConfig = {}): ContainerConfig {
  const merged: ContainerConfig = { ...base, ...ours };
  if (base.Env || ours.Env) merged.Env = mergeEnv(base.Env, ours.Env);
  if (base.Labels || ours.Labels) merged.Labels = { ...base.Labels, ...ours.Labels };
  if (base.ExposedPorts || ours.ExposedPorts) merged.ExposedPorts = { ...base.ExposedPorts, ...ours.ExposedPorts };
  // A new Entrypoint makes the base's Cmd meaningless (Docker's rule for ENTRYPOINT in a Dockerfile).
  if (ours.Entrypoint && !ours.Cmd) delete merged.Cmd;
  return merged;
}

/** A base pushed with Docker's media types: the same bytes under the OCI type an OCI manifest expects. */
function asOciLayer(layer: Descriptor): Descriptor {
  return layer.mediaType === MediaType.dockerLayerGzip ? { ...layer, mediaType: MediaType.layerGzip } : layer;
}

export async function buildImage(layout: ImageLayout, options: BuildOptions): Promise<BuiltImage> {
  const epoch = options.created ?? sourceDateEpoch();
  const created = new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
  const base = options.base === undefined ? undefined : await resolveImage(layout, options.base, options.platform);
  const layers = await Promise.all(options.layers.map((spec) => buildLayer(layout, spec, { mtime: epoch, gzipLevel: options.gzipLevel })));
  const platform = base ? { architecture: base.config.architecture, os: base.config.os, ...(base.config.variant ? { variant: base.config.variant } : {}) } : (options.platform ?? hostPlatform());
  const history: HistoryEntry[] = options.layers.map((spec) => ({ created, created_by: spec.createdBy ?? 'func-oci', ...(spec.comment ? { comment: spec.comment } : {}) }));
  const config: ImageConfig = {
    ...(base?.config ?? {}),
    created,
    ...platform,
    config: mergeConfig(base?.config.config, options.config),
    rootfs: { type: 'layers', diff_ids: [...(base?.config.rootfs.diff_ids ?? []), ...layers.map((l) => l.diffId)] },
    history: [...(base?.config.history ?? []), ...history],
  };
  const configBlob = await layout.writeBlob(jsonBytes(config));
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: MediaType.manifest,
    config: { mediaType: MediaType.config, ...configBlob },
    layers: [...(base?.manifest.layers ?? []).map(asOciLayer), ...layers.map((l) => l.descriptor)],
    ...(options.annotations ? { annotations: options.annotations } : {}),
  };
  const manifestBlob = await layout.writeBlob(jsonBytes(manifest));
  const descriptor: Descriptor = { mediaType: MediaType.manifest, ...manifestBlob };
  if (options.tag) await layout.tag(options.tag, descriptor);
  return { descriptor, manifest, config, digest: manifestBlob.digest };
}
