/**
 * `cluster-api serve` configuration: one option table, resolved by a pure function
 * (CLI > environment > default, principle 10). Only cli.ts reads process state and exits.
 */
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parseStorageUrl } from './storage/factory.js';

export interface ServeConfig {
  port: number;
  bindAddress: string;
  dataDir: string;
  /** Storage URL (`sqlite:<file>`, `memory:`); default `sqlite:<dataDir>/state.db`. */
  storage: string;
  tokenAuthFile?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** The CA of --tls-cert-file, for the kubeconfig only (the server does not send it). */
  tlsCaFile?: string;
  /** TLS for `--storage etcd://…` (kube-apiserver's --etcd-cafile / --etcd-certfile / --etcd-keyfile). */
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  /** Where the generated kubeconfig goes; default `<dataDir>/kubeconfig.yaml`. */
  kubeconfigOut: string;
  insecureHttp: boolean;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Key = keyof ServeConfig;

interface OptionRow {
  key: Key;
  /** The yargs flag (kebab-case, as kube-apiserver names its flags). */
  flag: string;
  env: string;
  describe: string;
  type: 'string' | 'number' | 'boolean';
}

export const serveOptions: readonly OptionRow[] = [
  { key: 'port', flag: 'port', env: 'CLUSTER_API_PORT', type: 'number', describe: 'port to listen on (default 6443; 0 picks a free one)' },
  { key: 'bindAddress', flag: 'bind-address', env: 'CLUSTER_API_BIND_ADDRESS', type: 'string', describe: 'address to listen on (default 127.0.0.1)' },
  { key: 'dataDir', flag: 'data-dir', env: 'CLUSTER_API_DATA_DIR', type: 'string', describe: 'state, certificates and credentials (default ./data)' },
  { key: 'storage', flag: 'storage', env: 'CLUSTER_API_STORAGE', type: 'string', describe: 'storage URL: sqlite:<file> (default <data-dir>/state.db), etcd://host:port[,host:port…] or memory:' },
  { key: 'tokenAuthFile', flag: 'token-auth-file', env: 'CLUSTER_API_TOKEN_AUTH_FILE', type: 'string', describe: 'CSV of token,user,uid,"group1,group2" (default: a generated admin token)' },
  { key: 'tlsCertFile', flag: 'tls-cert-file', env: 'CLUSTER_API_TLS_CERT_FILE', type: 'string', describe: 'serving certificate (PEM); default: generated from a private CA' },
  { key: 'tlsPrivateKeyFile', flag: 'tls-private-key-file', env: 'CLUSTER_API_TLS_PRIVATE_KEY_FILE', type: 'string', describe: 'private key of --tls-cert-file (PEM)' },
  { key: 'tlsCaFile', flag: 'tls-ca-file', env: 'CLUSTER_API_TLS_CA_FILE', type: 'string', describe: 'CA of --tls-cert-file (PEM), embedded in the kubeconfig (default: the self-signed end of the certificate file\'s chain, if there)' },
  { key: 'kubeconfigOut', flag: 'kubeconfig-out', env: 'CLUSTER_API_KUBECONFIG_OUT', type: 'string', describe: 'where to write a kubeconfig (default <data-dir>/kubeconfig.yaml)' },
  { key: 'etcdCafile', flag: 'etcd-cafile', env: 'CLUSTER_API_ETCD_CAFILE', type: 'string', describe: 'CA bundle to verify etcd servers (etcd:// storage over TLS)' },
  { key: 'etcdCertfile', flag: 'etcd-certfile', env: 'CLUSTER_API_ETCD_CERTFILE', type: 'string', describe: 'client certificate for etcd (PEM)' },
  { key: 'etcdKeyfile', flag: 'etcd-keyfile', env: 'CLUSTER_API_ETCD_KEYFILE', type: 'string', describe: 'private key of --etcd-certfile (PEM)' },
  { key: 'insecureHttp', flag: 'insecure-http', env: 'CLUSTER_API_INSECURE_HTTP', type: 'boolean', describe: 'serve plain HTTP (loopback bind addresses only)' },
];

const isLoopback = (address: string): boolean =>
  address === 'localhost' || address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));

function pick(row: OptionRow, cli: Record<string, unknown>, env: Record<string, string | undefined>): unknown {
  const fromCli = cli[row.key] ?? cli[row.flag];
  if (fromCli !== undefined && fromCli !== '') return fromCli;
  const fromEnv = env[row.env];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  if (row.type === 'boolean') return fromEnv === 'true' || fromEnv === '1';
  if (row.type === 'number') return Number(fromEnv);
  return fromEnv;
}

/** Pure: the same inputs always give the same config or the same ConfigError. */
export function resolveConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): ServeConfig {
  const raw: Partial<Record<Key, unknown>> = {};
  for (const row of serveOptions) raw[row.key] = pick(row, cli, env);
  const dataDir = resolve(cwd, String(raw.dataDir ?? './data'));
  const port = Number(raw.port ?? 6443);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port must be an integer 0-65535, got ${String(raw.port)}`);
  const config: ServeConfig = {
    port,
    bindAddress: String(raw.bindAddress ?? '127.0.0.1'),
    dataDir,
    storage: String(raw.storage ?? `sqlite:${join(dataDir, 'state.db')}`),
    kubeconfigOut: resolve(cwd, String(raw.kubeconfigOut ?? join(dataDir, 'kubeconfig.yaml'))),
    insecureHttp: raw.insecureHttp === true,
  };
  for (const key of ['tokenAuthFile', 'tlsCertFile', 'tlsPrivateKeyFile', 'tlsCaFile', 'etcdCafile', 'etcdCertfile', 'etcdKeyfile'] as const)
    if (raw[key] !== undefined) config[key] = resolve(cwd, String(raw[key]));
  return check(config);
}

function check(config: ServeConfig): ServeConfig {
  try {
    parseStorageUrl(config.storage);
  } catch (err) {
    // Before any certificate or token is made: a typo in --storage should fail at once.
    throw new ConfigError(`--storage: ${(err as Error).message}`);
  }
  if (config.insecureHttp && !isLoopback(config.bindAddress))
    throw new ConfigError(`--insecure-http is only allowed on a loopback bind address, not ${config.bindAddress}`);
  if (config.insecureHttp && (config.tlsCertFile || config.tlsPrivateKeyFile))
    throw new ConfigError('--insecure-http cannot be combined with --tls-cert-file / --tls-private-key-file');
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsPrivateKeyFile))
    throw new ConfigError('--tls-cert-file and --tls-private-key-file must be given together');
  if (config.tlsCaFile && !config.tlsCertFile) throw new ConfigError('--tls-ca-file goes with --tls-cert-file (the generated CA is embedded already)');
  if (Boolean(config.etcdCertfile) !== Boolean(config.etcdKeyfile))
    throw new ConfigError('--etcd-certfile and --etcd-keyfile must be given together');
  return config;
}
