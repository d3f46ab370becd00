/**
 * `cluster-api node` configuration, one option table resolved by a pure function (CLI > environment
 * > default), as serve's config.ts. The node's name defaults to the CN of its kubeconfig's client
 * certificate (`system:node:<name>`, what `cluster-api node-credentials` mints), else the host name.
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigError } from '../config.js';

export interface NodeConfig {
  kubeconfig?: string;
  context?: string;
  /** Empty: from the client certificate, else the host name. */
  name: string;
  dataDir: string;
  images: string;
  simulate: boolean;
  /** The node's InternalIP: where its kubelet server listens and what it reports. */
  address: string;
  kubeletPort: number;
  maxPods: number;
  podNetwork?: 'loopback' | 'shared';
  /** The node's Lease duration; renewed every quarter of it (the kubelet's --node-lease-duration-seconds). */
  nodeLeaseDurationSeconds: number;
  /** The kubelet server's certificate; default the kubeconfig's client certificate (node credentials serve both). */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
}

type Row = { key: keyof NodeConfig; flag: string; env: string; type: 'string' | 'number' | 'boolean'; describe: string; default?: (c: Partial<NodeConfig>, cwd: string) => unknown; parse?: (raw: unknown, cwd: string) => unknown };

/** The first non-internal IPv4 address, else loopback: what a kubelet reports by default. */
export function defaultAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

const int = (flag: string, min: number, max: number) => (raw: unknown): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`--${flag} must be an integer ${min}-${max}, got ${String(raw)}`);
  return n;
};
const path = (raw: unknown, cwd: string) => resolve(cwd, String(raw));
const bool = (raw: unknown) => raw === true || raw === 'true' || raw === '1';

export const nodeOptions: readonly Row[] = [
  { key: 'kubeconfig', flag: 'kubeconfig', env: 'CLUSTER_API_NODE_KUBECONFIG', type: 'string', parse: path, describe: 'how to reach the API server, as whom (default: kubectl\'s rules: KUBECONFIG, ~/.kube/config)' },
  { key: 'context', flag: 'context', env: 'CLUSTER_API_NODE_CONTEXT', type: 'string', describe: 'the kubeconfig context to use' },
  { key: 'name', flag: 'name', env: 'CLUSTER_API_NODE_NAME', type: 'string', default: () => '', describe: 'the node name (default: the client certificate\'s system:node:<name>, else the host name)' },
  { key: 'dataDir', flag: 'data-dir', env: 'CLUSTER_API_NODE_DATA_DIR', type: 'string', default: (_c, cwd) => resolve(cwd, 'node-data'), parse: path, describe: 'pods, logs and unpacked images (default ./node-data)' },
  { key: 'images', flag: 'images', env: 'CLUSTER_API_NODE_IMAGES', type: 'string', default: (c) => join(c.dataDir!, 'images'), parse: path, describe: 'the OCI image layout function images run from (default <data-dir>/images)' },
  { key: 'simulate', flag: 'simulate', env: 'CLUSTER_API_NODE_SIMULATE', type: 'boolean', default: () => true, parse: bool, describe: 'run other images simulated as kwok does (default); --no-simulate refuses them' },
  { key: 'address', flag: 'address', env: 'CLUSTER_API_NODE_ADDRESS', type: 'string', default: () => defaultAddress(), describe: 'the node\'s IP: its kubelet server listens there (default: the first non-loopback IPv4)' },
  { key: 'kubeletPort', flag: 'kubelet-port', env: 'CLUSTER_API_NODE_KUBELET_PORT', type: 'number', default: () => 10250, parse: int('kubelet-port', 0, 65535), describe: 'the kubelet server port (default 10250; 0 picks a free one)' },
  { key: 'maxPods', flag: 'max-pods', env: 'CLUSTER_API_NODE_MAX_PODS', type: 'number', default: () => 110, parse: int('max-pods', 1, 100_000), describe: 'pods this node accepts (default 110)' },
  { key: 'nodeLeaseDurationSeconds', flag: 'node-lease-duration-seconds', env: 'CLUSTER_API_NODE_LEASE_DURATION_SECONDS', type: 'number', default: () => 40, parse: int('node-lease-duration-seconds', 1, 3600), describe: 'the node\'s Lease duration, renewed every quarter of it (default 40)' },
  { key: 'podNetwork', flag: 'pod-network', env: 'CLUSTER_API_NODE_POD_NETWORK', type: 'string', describe: 'loopback (an address per pod, Linux default) or shared (the node\'s address, a port per pod)' },
  { key: 'tlsCertFile', flag: 'tls-cert-file', env: 'CLUSTER_API_NODE_TLS_CERT_FILE', type: 'string', parse: path, describe: 'the kubelet server certificate (default: the kubeconfig\'s client certificate)' },
  { key: 'tlsPrivateKeyFile', flag: 'tls-private-key-file', env: 'CLUSTER_API_NODE_TLS_PRIVATE_KEY_FILE', type: 'string', parse: path, describe: 'its private key' },
];

/** Pure: CLI > environment > default. */
export function resolveNodeConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): NodeConfig {
  const config: Partial<NodeConfig> = {};
  for (const row of nodeOptions) {
    const fromCli = cli[row.key] ?? cli[row.flag];
    const raw = fromCli !== undefined && fromCli !== '' ? fromCli : env[row.env] || undefined;
    const value = raw === undefined ? row.default?.(config, cwd) : row.parse ? row.parse(raw, cwd) : String(raw);
    if (value !== undefined) (config as Record<string, unknown>)[row.key] = value;
  }
  if (config.podNetwork !== undefined && config.podNetwork !== 'loopback' && config.podNetwork !== 'shared') throw new ConfigError(`--pod-network must be loopback or shared, got ${config.podNetwork}`);
  if (!isIP(config.address!)) throw new ConfigError(`--address must be an IP address, got ${config.address}`);
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsPrivateKeyFile)) throw new ConfigError('--tls-cert-file and --tls-private-key-file must be given together');
  return config as NodeConfig;
}

/** `system:node:<name>` of a client certificate, if it is a node's. */
export function nodeNameOf(certPem: Buffer | string | undefined): string | undefined {
  if (!certPem) return undefined;
  try {
    const cn = /CN=([^\n,]+)/.exec(new X509Certificate(certPem).subject)?.[1];
    return cn?.startsWith('system:node:') ? cn.slice('system:node:'.length) : undefined;
  } catch {
    return undefined;
  }
}

export const defaultNodeName = (): string => hostname().toLowerCase();
