/**
 * `cluster-api serve` and `cluster-api broker` configuration: one option table per command whose
 * rows say where a value may come from, its default and how it is parsed, resolved by a pure
 * function (CLI > environment > default, principle 10; as the runtime's config.ts). Only cli.ts
 * reads process state and exits.
 */
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { parseAdvertised } from './broker/cluster/advertise.js';
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
  /** Run the event broker in the process (default true). */
  broker: boolean;
  /** The broker's event log: `sqlite:<file>` (default `<dataDir>/broker.db`) or `nats://…`. */
  brokerStore: string;
  brokerPort: number;
  brokerBindAddress: string;
  /** `host` or `host:port` in Brokers' `status.address.url`; default the broker's bind address. */
  brokerAdvertiseAddress?: string;
}

/** `cluster-api broker`: a broker process of its own, a client of the API server by kubeconfig. */
export interface BrokerRoleConfig {
  /** Default: kubectl's rules (KUBECONFIG, ~/.kube/config, in-cluster). */
  kubeconfig?: string;
  context?: string;
  dataDir: string;
  brokerStore: string;
  port: number;
  bindAddress: string;
  advertiseAddress?: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Options resolved so far (rows resolve in table order) and the directory relative paths start from. */
interface Resolving<C> {
  config: Partial<C>;
  cwd: string;
}

interface OptionRow<C, K extends keyof C> {
  key: K;
  /** The yargs flag (kebab-case, as kube-apiserver names its flags). */
  flag: string;
  env: string;
  /** Given neither on the command line nor in the environment; a function when it follows earlier rows. */
  default: C[K] | ((at: Resolving<C>) => C[K]);
  /** A given value (a CLI value, or the environment's string) → the option; throws ConfigError naming the flag. */
  parse: (raw: unknown, at: Resolving<C>) => C[K];
  describe: string;
  type: 'string' | 'number' | 'boolean';
}

/** A row of any option of `C`. */
type AnyRow<C> = { [K in keyof C]-?: OptionRow<C, K> }[keyof C];

const portOf = (flag: string) => (raw: unknown): number => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new ConfigError(`--${flag} must be an integer 0-65535, got ${String(raw)}`);
  return n;
};
const port = portOf('port');
const text = (raw: unknown): string => String(raw);
const bool = (raw: unknown): boolean => raw === true || raw === 'true' || raw === '1';
const path = (raw: unknown, { cwd }: Resolving<unknown>): string => resolve(cwd, String(raw));
const storageUrl = (raw: unknown): string => {
  try {
    parseStorageUrl(String(raw));
  } catch (err) {
    // Before any certificate or token is made: a typo in --storage should fail at once.
    throw new ConfigError(`--storage: ${(err as Error).message}`);
  }
  return String(raw);
};
const brokerStoreUrl = (raw: unknown): string => {
  const url = String(raw);
  if (/^sqlite:(\/\/)?./.test(url) || /^nats:\/\/[^/?]+/.test(url)) return url;
  throw new ConfigError(`--broker-store: "${url}" is not a broker store: use sqlite:<file> or nats://host:port[,host:port…][?replicas=N]`);
};
const advertisedAt = (flag: string) => (raw: unknown): string => {
  try {
    parseAdvertised(String(raw));
  } catch (err) {
    throw new ConfigError(`--${flag}: ${(err as Error).message}`);
  }
  return String(raw);
};
const inDataDir = (file: string) => ({ config }: Resolving<{ dataDir: string }>): string => join(config.dataDir!, file);

const row = <K extends keyof ServeConfig>(r: OptionRow<ServeConfig, K>): OptionRow<ServeConfig, K> => r;
const brokerRow = <K extends keyof BrokerRoleConfig>(r: OptionRow<BrokerRoleConfig, K>): OptionRow<BrokerRoleConfig, K> => r;
const BROKER_PORT = 8090;

export const serveOptions: readonly AnyRow<ServeConfig>[] = [
  row({ key: 'port', flag: 'port', env: 'CLUSTER_API_PORT', type: 'number', default: 6443, parse: port, describe: 'port to listen on (default 6443; 0 picks a free one)' }),
  row({ key: 'bindAddress', flag: 'bind-address', env: 'CLUSTER_API_BIND_ADDRESS', type: 'string', default: '127.0.0.1', parse: text, describe: 'address to listen on (default 127.0.0.1)' }),
  row({ key: 'dataDir', flag: 'data-dir', env: 'CLUSTER_API_DATA_DIR', type: 'string', default: (at) => path('./data', at), parse: path, describe: 'state, certificates and credentials (default ./data)' }),
  row({ key: 'storage', flag: 'storage', env: 'CLUSTER_API_STORAGE', type: 'string', default: (at) => `sqlite:${inDataDir('state.db')(at)}`, parse: storageUrl, describe: 'storage URL: sqlite:<file> (default <data-dir>/state.db), etcd://host:port[,host:port…] or memory:' }),
  row({ key: 'tokenAuthFile', flag: 'token-auth-file', env: 'CLUSTER_API_TOKEN_AUTH_FILE', type: 'string', default: undefined, parse: path, describe: 'CSV of token,user,uid,"group1,group2" (default: a generated admin token)' }),
  row({ key: 'tlsCertFile', flag: 'tls-cert-file', env: 'CLUSTER_API_TLS_CERT_FILE', type: 'string', default: undefined, parse: path, describe: 'serving certificate (PEM); default: generated from a private CA' }),
  row({ key: 'tlsPrivateKeyFile', flag: 'tls-private-key-file', env: 'CLUSTER_API_TLS_PRIVATE_KEY_FILE', type: 'string', default: undefined, parse: path, describe: 'private key of --tls-cert-file (PEM)' }),
  row({ key: 'tlsCaFile', flag: 'tls-ca-file', env: 'CLUSTER_API_TLS_CA_FILE', type: 'string', default: undefined, parse: path, describe: 'CA of --tls-cert-file (PEM), embedded in the kubeconfig (default: the self-signed end of the certificate file\'s chain, if there)' }),
  row({ key: 'kubeconfigOut', flag: 'kubeconfig-out', env: 'CLUSTER_API_KUBECONFIG_OUT', type: 'string', default: inDataDir('kubeconfig.yaml'), parse: path, describe: 'where to write a kubeconfig (default <data-dir>/kubeconfig.yaml)' }),
  row({ key: 'etcdCafile', flag: 'etcd-cafile', env: 'CLUSTER_API_ETCD_CAFILE', type: 'string', default: undefined, parse: path, describe: 'CA bundle to verify etcd servers (etcd:// storage over TLS)' }),
  row({ key: 'etcdCertfile', flag: 'etcd-certfile', env: 'CLUSTER_API_ETCD_CERTFILE', type: 'string', default: undefined, parse: path, describe: 'client certificate for etcd (PEM)' }),
  row({ key: 'etcdKeyfile', flag: 'etcd-keyfile', env: 'CLUSTER_API_ETCD_KEYFILE', type: 'string', default: undefined, parse: path, describe: 'private key of --etcd-certfile (PEM)' }),
  row({ key: 'insecureHttp', flag: 'insecure-http', env: 'CLUSTER_API_INSECURE_HTTP', type: 'boolean', default: false, parse: bool, describe: 'serve plain HTTP (loopback bind addresses only)' }),
  row({ key: 'broker', flag: 'broker', env: 'CLUSTER_API_BROKER', type: 'boolean', default: true, parse: bool, describe: 'run the event broker (Knative Brokers and Triggers) in this process; --no-broker turns it off' }),
  row({ key: 'brokerStore', flag: 'broker-store', env: 'CLUSTER_API_BROKER_STORE', type: 'string', default: (at) => `sqlite:${inDataDir('broker.db')(at)}`, parse: brokerStoreUrl, describe: 'the broker\'s event log: sqlite:<file> (default <data-dir>/broker.db) or nats://host:port[,host:port…][?replicas=N]' }),
  row({ key: 'brokerPort', flag: 'broker-port', env: 'CLUSTER_API_BROKER_PORT', type: 'number', default: ({ config }) => (config.port === 0 ? 0 : BROKER_PORT), parse: portOf('broker-port'), describe: `port of the broker's ingress (default ${BROKER_PORT}; a free one when --port is 0)` }),
  row({ key: 'brokerBindAddress', flag: 'broker-bind-address', env: 'CLUSTER_API_BROKER_BIND_ADDRESS', type: 'string', default: ({ config }) => config.bindAddress!, parse: text, describe: 'address of the broker\'s ingress (default: --bind-address)' }),
  row({ key: 'brokerAdvertiseAddress', flag: 'broker-advertise-address', env: 'CLUSTER_API_BROKER_ADVERTISE_ADDRESS', type: 'string', default: undefined, parse: advertisedAt('broker-advertise-address'), describe: 'host or host:port Brokers\' status.address.url names (default: the broker\'s bind address and port)' }),
];

export const brokerOptions: readonly AnyRow<BrokerRoleConfig>[] = [
  brokerRow({ key: 'kubeconfig', flag: 'kubeconfig', env: 'CLUSTER_API_BROKER_KUBECONFIG', type: 'string', default: undefined, parse: path, describe: 'the broker\'s credentials for the API server (default: KUBECONFIG, ~/.kube/config, or in-cluster)' }),
  brokerRow({ key: 'context', flag: 'context', env: 'CLUSTER_API_BROKER_CONTEXT', type: 'string', default: undefined, parse: text, describe: 'kubeconfig context (default: its current-context)' }),
  brokerRow({ key: 'dataDir', flag: 'data-dir', env: 'CLUSTER_API_DATA_DIR', type: 'string', default: (at) => path('./data', at), parse: path, describe: 'where the default SQLite event log lives (default ./data)' }),
  brokerRow({ key: 'brokerStore', flag: 'broker-store', env: 'CLUSTER_API_BROKER_STORE', type: 'string', default: (at) => `sqlite:${inDataDir('broker.db')(at)}`, parse: brokerStoreUrl, describe: 'the event log: sqlite:<file> (default <data-dir>/broker.db) or nats://host:port[,host:port…][?replicas=N] (shared by several broker processes)' }),
  brokerRow({ key: 'port', flag: 'port', env: 'CLUSTER_API_BROKER_PORT', type: 'number', default: BROKER_PORT, parse: port, describe: `port of the ingress (default ${BROKER_PORT}; 0 picks a free one)` }),
  brokerRow({ key: 'bindAddress', flag: 'bind-address', env: 'CLUSTER_API_BROKER_BIND_ADDRESS', type: 'string', default: '127.0.0.1', parse: text, describe: 'address of the ingress (default 127.0.0.1)' }),
  brokerRow({ key: 'advertiseAddress', flag: 'advertise-address', env: 'CLUSTER_API_BROKER_ADVERTISE_ADDRESS', type: 'string', default: undefined, parse: advertisedAt('advertise-address'), describe: 'host or host:port Brokers\' status.address.url names (default: the bind address and port; the same for every process behind one address)' }),
];

const isLoopback = (address: string): boolean =>
  address === 'localhost' || address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));

/** The value a row is given: the CLI's (by key or flag), else the environment's; undefined when neither. */
function given<C>(row: AnyRow<C>, cli: Record<string, unknown>, env: Record<string, string | undefined>): unknown {
  const fromCli = cli[row.key as string] ?? cli[row.flag];
  if (fromCli !== undefined && fromCli !== '') return fromCli;
  const fromEnv = env[row.env];
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
}

/** Pure: each row in order, given or defaulted. */
function resolveRows<C>(rows: readonly AnyRow<C>[], cli: Record<string, unknown>, env: Record<string, string | undefined>, cwd: string): C {
  const at: Resolving<C> = { config: {}, cwd };
  for (const r of rows) {
    const raw = given(r, cli, env);
    const value = raw === undefined ? (typeof r.default === 'function' ? (r.default as (at: Resolving<C>) => unknown)(at) : r.default) : r.parse(raw, at);
    if (value !== undefined) (at.config as Record<string, unknown>)[r.key as string] = value;
  }
  return at.config as C;
}

/** Pure: the same inputs always give the same config or the same ConfigError. */
export function resolveConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): ServeConfig {
  return check(resolveRows(serveOptions, cli, env, cwd));
}

export function resolveBrokerConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): BrokerRoleConfig {
  return resolveRows(brokerOptions, cli, env, cwd);
}

/** Rules between options. */
function check(config: ServeConfig): ServeConfig {
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
