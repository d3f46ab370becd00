/**
 * `cluster-api node` configuration: an option table of options.ts, as serve's and the broker's. The node's name defaults to the CN of its kubeconfig's client
 * certificate (`system:node:<name>`, what `cluster-api node-credentials` mints), else the host name.
 */
import { X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { parseQuantity } from '../api/quantity.js';
import { DefaultKubeReserved, parseReserved } from './node-object.js';
import { imageGcPolicy, imageGcRows, type ImageGcConfig } from './image-gc.js';
import { ConfigError, bool, count, path, resolveRows, text, type AnyRow, type OptionRow } from '../options.js';

export interface NodeConfig extends ImageGcConfig {
  kubeconfig?: string;
  /** TLS bootstrap: credentials to request the node's own certificate with when `kubeconfig` does not exist yet. */
  bootstrapKubeconfig?: string;
  /** The kubelet server's certificate from a kubernetes.io/kubelet-serving CSR (the kubelet's serverTLSBootstrap). */
  serverTlsBootstrap: boolean;
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
  /** How pods run (default process; oci asks for runc sandboxes: the cluster's --cluster-cidr must then be a private range, not loopback). */
  containerRuntime?: 'oci' | 'process' | 'simulated';
  /** The cluster DNS Service's clusterIP (the kubelet's --cluster-dns): an oci node answers DNS there and gives it to its pods. */
  clusterDns?: string;
  clusterDomain: string;
  /** Kept from pods for the node's own processes (millicores, bytes). */
  kubeReserved: { cpu?: number; memory?: number };
  /** A container's log file rotates past this many bytes, and this many files are kept (the kubelet's --container-log-max-size, --container-log-max-files). */
  containerLogMaxSize: number;
  containerLogMaxFiles: number;
  /** Pod networks an oci node keeps ready ahead of need (0: none). */
  ociSandboxPool: number;
  /** The node's Lease duration; renewed every quarter of it (the kubelet's --node-lease-duration-seconds). */
  nodeLeaseDurationSeconds: number;
  /** The kubelet server's certificate; default the kubeconfig's client certificate (node credentials serve both). */
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
}

const row = <K extends keyof NodeConfig>(r: OptionRow<NodeConfig, K>): OptionRow<NodeConfig, K> => r;

/** The first non-internal IPv4 address, else loopback: what a kubelet reports by default. */
export function defaultAddress(): string {
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '127.0.0.1';
}

/** `--pod-network` (serve's embedded node and `cluster-api node`). */
export const podNetwork = (raw: unknown): 'loopback' | 'shared' => {
  if (raw !== 'loopback' && raw !== 'shared') throw new ConfigError(`--pod-network must be loopback or shared, got ${String(raw)}`);
  return raw;
};

/** `--container-log-max-size` (the kubelet's: a quantity of bytes, at least 1Ki). */
export const containerLogMaxSize = (raw: unknown): number => {
  const n = parseQuantity(String(raw));
  if (n === undefined || !Number.isFinite(n) || n < 1024) throw new ConfigError(`--container-log-max-size must be a size of at least 1Ki (as 10Mi), got ${String(raw)}`);
  return Math.floor(n);
};

/** `--kube-reserved` (the kubelet's: `cpu=100m,memory=256Mi`). */
export const kubeReserved = (raw: unknown): { cpu?: number; memory?: number } => {
  try {
    return parseReserved(String(raw));
  } catch (err) {
    throw new ConfigError(`--kube-reserved: ${(err as Error).message}`);
  }
};

/** `--container-runtime` (serve's embedded node and `cluster-api node`). */
export const containerRuntime = (raw: unknown): 'oci' | 'process' | 'simulated' => {
  if (raw !== 'oci' && raw !== 'process' && raw !== 'simulated') throw new ConfigError(`--container-runtime must be oci, process or simulated, got ${String(raw)}`);
  return raw;
};

export const nodeOptions: readonly AnyRow<NodeConfig>[] = [
  row({ key: 'kubeconfig', flag: 'kubeconfig', env: 'CLUSTER_API_NODE_KUBECONFIG', type: 'string', default: undefined, parse: path, describe: 'how to reach the API server, as whom (default: kubectl\'s rules: KUBECONFIG, ~/.kube/config)' }),
  row({ key: 'bootstrapKubeconfig', flag: 'bootstrap-kubeconfig', env: 'CLUSTER_API_NODE_BOOTSTRAP_KUBECONFIG', type: 'string', default: undefined, parse: path, describe: 'TLS bootstrap: a kubeconfig with a bootstrap token; when --kubeconfig does not exist, the node requests its client certificate with it and writes --kubeconfig' }),
  row({ key: 'serverTlsBootstrap', flag: 'server-tls-bootstrap', env: 'CLUSTER_API_NODE_SERVER_TLS_BOOTSTRAP', type: 'boolean', default: false, parse: bool, describe: 'ask for the kubelet server\'s certificate with a kubernetes.io/kubelet-serving CSR and wait for an administrator to approve it (kept in <data-dir>/pki)' }),
  row({ key: 'context', flag: 'context', env: 'CLUSTER_API_NODE_CONTEXT', type: 'string', default: undefined, parse: text, describe: 'the kubeconfig context to use' }),
  row({ key: 'name', flag: 'name', env: 'CLUSTER_API_NODE_NAME', type: 'string', default: '', parse: text, describe: 'the node name (default: the client certificate\'s system:node:<name>, else the host name)' }),
  row({ key: 'dataDir', flag: 'data-dir', env: 'CLUSTER_API_NODE_DATA_DIR', type: 'string', default: ({ cwd }) => resolve(cwd, 'node-data'), parse: path, describe: 'pods, logs and unpacked images (default ./node-data)' }),
  row({ key: 'images', flag: 'images', env: 'CLUSTER_API_NODE_IMAGES', type: 'string', default: ({ config }) => join(config.dataDir!, 'images'), parse: path, describe: 'the OCI image layout function images run from (default <data-dir>/images)' }),
  row({ key: 'simulate', flag: 'simulate', env: 'CLUSTER_API_NODE_SIMULATE', type: 'boolean', default: true, parse: bool, describe: 'run other images simulated as kwok does (default); --no-simulate refuses them' }),
  row({ key: 'address', flag: 'address', env: 'CLUSTER_API_NODE_ADDRESS', type: 'string', default: () => defaultAddress(), parse: text, describe: 'the node\'s IP: its kubelet server listens there (default: the first non-loopback IPv4)' }),
  row({ key: 'kubeletPort', flag: 'kubelet-port', env: 'CLUSTER_API_NODE_KUBELET_PORT', type: 'number', default: 10250, parse: count('kubelet-port', 0, 65535), describe: 'the kubelet server port (default 10250; 0 picks a free one)' }),
  row({ key: 'maxPods', flag: 'max-pods', env: 'CLUSTER_API_NODE_MAX_PODS', type: 'number', default: 110, parse: count('max-pods', 1, 100_000), describe: 'pods this node accepts (default 110)' }),
  row({ key: 'nodeLeaseDurationSeconds', flag: 'node-lease-duration-seconds', env: 'CLUSTER_API_NODE_LEASE_DURATION_SECONDS', type: 'number', default: 40, parse: count('node-lease-duration-seconds', 1, 3600), describe: 'the node\'s Lease duration, renewed every quarter of it (default 40)' }),
  row({ key: 'podNetwork', flag: 'pod-network', env: 'CLUSTER_API_NODE_POD_NETWORK', type: 'string', default: undefined, parse: podNetwork, describe: 'loopback (an address per pod, Linux default) or shared (the node\'s address, a port per pod)' }),
  row({ key: 'containerRuntime', flag: 'container-runtime', env: 'CLUSTER_API_NODE_CONTAINER_RUNTIME', type: 'string', default: undefined, parse: containerRuntime, describe: 'how pods run: process (function images as child processes, the default), oci (runc in namespaces and cgroups; needs runc, conmon, the CNI plugins, root, and a cluster whose --cluster-cidr is a private range) or simulated (every image as kwok runs it)' }),
  row({ key: 'kubeReserved', flag: 'kube-reserved', env: 'CLUSTER_API_NODE_KUBE_RESERVED', type: 'string', default: () => parseReserved(DefaultKubeReserved), parse: kubeReserved, describe: `what the node keeps from pods for its own processes, as the kubelet's (default ${DefaultKubeReserved})` }),
  row({ key: 'clusterDns', flag: 'cluster-dns', env: 'CLUSTER_API_NODE_CLUSTER_DNS', type: 'string', default: undefined, parse: (raw) => {
    if (!isIP(String(raw))) throw new ConfigError(`--cluster-dns must be an IP address, got ${String(raw)}`);
    return String(raw);
  }, describe: 'the kube-system/kube-dns Service\'s clusterIP: with --container-runtime oci the node answers DNS there and gives it to its pods (default: none, pods use the host\'s resolv.conf)' }),
  row({ key: 'clusterDomain', flag: 'cluster-domain', env: 'CLUSTER_API_NODE_CLUSTER_DOMAIN', type: 'string', default: 'cluster.local', parse: text, describe: 'the cluster\'s DNS domain (default cluster.local)' }),
  row({ key: 'containerLogMaxSize', flag: 'container-log-max-size', env: 'CLUSTER_API_NODE_CONTAINER_LOG_MAX_SIZE', type: 'string', default: 10 * 1024 * 1024, parse: containerLogMaxSize, describe: 'a container\'s log file rotates past this size (default 10Mi)' }),
  row({ key: 'containerLogMaxFiles', flag: 'container-log-max-files', env: 'CLUSTER_API_NODE_CONTAINER_LOG_MAX_FILES', type: 'number', default: 5, parse: count('container-log-max-files', 2, 1000), describe: 'log files kept per container, the current one included (default 5)' }),
  row({ key: 'ociSandboxPool', flag: 'oci-sandbox-pool', env: 'CLUSTER_API_NODE_OCI_SANDBOX_POOL', type: 'number', default: 2, parse: count('oci-sandbox-pool', 0, 64), describe: 'pod networks (a namespace with CNI ADD done) an oci node keeps ready, so a pod\'s sandbox waits for no CNI plugin (default 2; 0: none)' }),
  row({ key: 'tlsCertFile', flag: 'tls-cert-file', env: 'CLUSTER_API_NODE_TLS_CERT_FILE', type: 'string', default: undefined, parse: path, describe: 'the kubelet server certificate (default: the kubeconfig\'s client certificate)' }),
  row({ key: 'tlsPrivateKeyFile', flag: 'tls-private-key-file', env: 'CLUSTER_API_NODE_TLS_PRIVATE_KEY_FILE', type: 'string', default: undefined, parse: path, describe: 'its private key' }),
  ...imageGcRows<NodeConfig>('CLUSTER_API_NODE_', 'the node'),
];

/** Pure: CLI > environment > default. */
export function resolveNodeConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): NodeConfig {
  const config = resolveRows(nodeOptions, cli, env, cwd);
  if (!isIP(config.address!)) throw new ConfigError(`--address must be an IP address, got ${config.address}`);
  if (config.bootstrapKubeconfig && !config.kubeconfig) throw new ConfigError('--bootstrap-kubeconfig needs --kubeconfig: the file the node\'s own credentials are written to');
  if (config.serverTlsBootstrap && config.tlsCertFile) throw new ConfigError('--server-tls-bootstrap and --tls-cert-file exclude each other: the first asks the cluster for the certificate the second names');
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsPrivateKeyFile)) throw new ConfigError('--tls-cert-file and --tls-private-key-file must be given together');
  imageGcPolicy(config);
  return config;
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
