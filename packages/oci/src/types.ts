/**
 * The OCI image-spec 1.1 documents this package reads and writes (hand-written: only the fields
 * that clients read; unknown fields are kept as they came when documents pass through).
 */

/** `sha256:<64 hex>`: the only algorithm this package writes; others are refused when read. */
export type Digest = `sha256:${string}`;

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
  'os.version'?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: Digest;
  size: number;
  annotations?: Record<string, string>;
  platform?: Platform;
  urls?: string[];
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export interface HistoryEntry {
  created?: string;
  created_by?: string;
  comment?: string;
  empty_layer?: boolean;
  author?: string;
}

/** The `config` of an image configuration: what a runtime needs to start the process. */
export interface ContainerConfig {
  User?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Env?: string[];
  Entrypoint?: string[];
  Cmd?: string[];
  Volumes?: Record<string, Record<string, never>>;
  WorkingDir?: string;
  Labels?: Record<string, string>;
  StopSignal?: string;
}

export interface ImageConfig {
  created?: string;
  author?: string;
  architecture: string;
  os: string;
  variant?: string;
  config?: ContainerConfig;
  rootfs: { type: 'layers'; diff_ids: Digest[] };
  history?: HistoryEntry[];
}
