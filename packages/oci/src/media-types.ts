/** Media types of OCI image-spec 1.1 and their Docker schema 2 twins (registries serve both). */
export const MediaType = {
  layout: 'application/vnd.oci.image.layout.v1+json',
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  layerTar: 'application/vnd.oci.image.layer.v1.tar',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

export const isIndexType = (t: string | undefined): boolean => t === MediaType.index || t === MediaType.dockerManifestList;
export const isManifestType = (t: string | undefined): boolean => t === MediaType.manifest || t === MediaType.dockerManifest;

/** Layers a reader can apply: gzip'd or plain tar, OCI or Docker (zstd and foreign layers are refused). */
export function layerCompression(mediaType: string): 'gzip' | 'none' {
  if (mediaType === MediaType.layerGzip || mediaType === MediaType.dockerLayerGzip) return 'gzip';
  if (mediaType === MediaType.layerTar) return 'none';
  throw new Error(`Unsupported layer media type ${mediaType}: only tar and tar+gzip layers can be applied`);
}

/** The Accept header for manifest GETs: every kind we can read, so a registry need not down-convert. */
export const MANIFEST_ACCEPT = [MediaType.index, MediaType.manifest, MediaType.dockerManifestList, MediaType.dockerManifest].join(', ');

/** The annotation that names a tag in an image layout's index.json (OCI image-layout 1.0). */
export const REF_NAME = 'org.opencontainers.image.ref.name';
