/**
 * `cluster-api serve` and `cluster-api broker` configuration: an option table per command
 * (options.ts), and the checks across options a table cannot make.
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { unknownControllers } from './controllers/names.js';
import { parseAdvertised } from './broker/cluster/advertise.js';
import { containerLogMaxSize, containerRuntime, kubeReserved, podNetwork } from './node/config.js';
import { imageGcPolicy, imageGcRows, type ImageGcConfig } from './node/image-gc.js';
import { DefaultKubeReserved, parseReserved } from './node/node-object.js';
import { parseStorageUrl } from './storage/factory.js';
import { AuthorizationModes, type AuthorizationMode } from './auth/authorizers.js';
import { parseRange, rangesOverlap } from './registry/kinds/service-allocator.js';
import { Disableable } from './serve/names.js';
import { allKinds } from './registry/kinds/index.js';
import { runtimeConfig } from './registry/runtime-config.js';
import { ConfigError, bool, count, path, port, portOf, resolveRows, text, type AnyRow, type OptionRow, type Resolving } from './options.js';

export { ConfigError } from './options.js';

export interface ServeConfig extends ImageGcConfig {
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
  /** Bootstrap token Secrets authenticate (node agents joining by TLS bootstrap). */
  enableBootstrapTokenAuth: boolean;
  /** kube-apiserver's `--authorization-mode`: the authorizers asked, in order (default RBAC). */
  authorizationMode: AuthorizationMode[];
  /** kube-controller-manager's --controllers: `*` (every controller on by default), `name`, `-name`. */
  controllers: string[];
  /** Parts of serve not run in this process (k3s' --disable): controller-manager, scheduler, node, registry, broker, gateway. */
  disable: string[];
  /** No embedded node agent (k3s' --disable-agent; `--disable node`): an API server for other machines' agents only. */
  disableAgent: boolean;
  /** No embedded scheduler (k3s' --disable-scheduler). */
  disableScheduler: boolean;
  /** The embedded agent's node name (the kubelet's --hostname-override); default the host name. */
  nodeName: string;
  /** The embedded agent runs non-function images simulated (kwok) rather than refusing them. */
  simulate: boolean;
  maxPods: number;
  /** What the embedded node keeps from pods for this process (millicores, bytes: the kubelet's --kube-reserved). */
  kubeReserved: { cpu?: number; memory?: number };
  /** The embedded node's container log rotation (the kubelet's --container-log-max-size / -files). */
  containerLogMaxSize: number;
  containerLogMaxFiles: number;
  /** Pod networks an oci node keeps ready ahead of need (0: none). */
  ociSandboxPool: number;
  /** The embedded agent's kubelet server port; 0 picks a free one (the Node announces it). */
  kubeletPort: number;
  /** Pod IPs: loopback (a 127.x address per pod, Linux) or shared (the node's IP, a port per pod). */
  podNetwork?: 'loopback' | 'shared';
  /** The embedded node's runtime; unset: oci where this machine can run it, else process (node/runtime/choose.ts). */
  containerRuntime?: 'oci' | 'process' | 'simulated';
  clusterCidr: string;
  /** Service clusterIPs (kube-apiserver's flag); a loopback range by default, so they are bindable on Linux. */
  serviceClusterIpRange: string;
  /** kube-apiserver's --runtime-config: built-in group versions turned off or on (registry/runtime-config.ts). */
  runtimeConfig?: string;
  nodeCidrMaskSize: number;
  /** Seconds a node may stay silent before it is Unknown (kube-controller-manager's flag). */
  nodeMonitorGracePeriod: number;
  /** The embedded agent's Lease duration; renewed every quarter of it (the kubelet's flag). */
  nodeLeaseDurationSeconds: number;
  /** Run the event broker in the process (default true). */
  broker: boolean;
  /** The broker's event log: `sqlite:<file>` (default `<dataDir>/broker.db`) or `nats://…`. */
  brokerStore: string;
  brokerPort: number;
  brokerBindAddress: string;
  /** The ingress gateway's port (Knative Routes by Host); 0 a free one. */
  gatewayPort: number;
  /** The OCI distribution registry's port (over the node's image store); 0 a free one. */
  registryPort: number;
  /** `host` or `host:port` in Brokers' `status.address.url`; default the broker's bind address. */
  brokerAdvertiseAddress?: string;
  /** Run no controller manager in this process (`cluster-api controller-manager` runs it elsewhere). */
  disableControllerManager?: boolean;
  /** kube-controller-manager's --leader-elect-lease-duration, in seconds (API servers sharing etcd elect one). */
  leaderElectLeaseDuration?: number;
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
  /** The serving gateway (`http://host:port`) the broker delivers cluster-local subscribers through and runs asynchronous invocations with. */
  gatewayUrl?: string;
}

/** An `http://host[:port]` URL with nothing after its authority (a part's base URL), for `--flag`. */
export const baseUrl = (flag: string) => (raw: unknown): string => {
  let url: URL | undefined;
  try {
    url = new URL(String(raw));
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'http:' || url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== ''))
    throw new ConfigError(`--${flag}: ${JSON.stringify(String(raw))} is not an http://host:port URL`);
  return url.origin;
};

const storageUrl = (raw: unknown): string => {
  try {
    parseStorageUrl(String(raw));
  } catch (err) {
    // Before any certificate or token is made: a typo in --storage should fail at once.
    throw new ConfigError(`--storage: ${(err as Error).message}`);
  }
  return String(raw);
};
/** `RBAC`, `Node,RBAC`…: known modes, each once, and only those this server can run. */
const authorizationModes = (raw: unknown): AuthorizationMode[] => {
  const modes = String(raw).split(',').map((m) => m.trim());
  for (const [i, mode] of modes.entries()) {
    if (!(AuthorizationModes as readonly string[]).includes(mode))
      throw new ConfigError(`--authorization-mode: unknown mode ${JSON.stringify(mode)}; supported: ${AuthorizationModes.join(', ')}`);
    if (modes.indexOf(mode) !== i) throw new ConfigError(`--authorization-mode: ${mode} is given more than once`);
  }
  return modes as AuthorizationMode[];
};
const controllerList = (raw: unknown): string[] => {
  const words = String(raw).split(',').map((w) => w.trim()).filter(Boolean);
  const unknown = unknownControllers(words);
  if (unknown.length > 0) throw new ConfigError(`--controllers: ${JSON.stringify(unknown[0])} is not in the list of known controllers`);
  return words;
};
/** `--disable a --disable b,c` (or the variable's `a,b`): known parts, each once. */
const partList = (raw: unknown): string[] => {
  const names = [...new Set(([] as unknown[]).concat(raw).flatMap((v) => String(v).split(',')).map((n) => n.trim()).filter(Boolean))];
  const unknown = names.find((n) => !(Disableable as readonly string[]).includes(n));
  if (unknown !== undefined) throw new ConfigError(`--disable: ${JSON.stringify(unknown)} is not a part that can be disabled; parts: ${Disableable.join(', ')}`);
  return names;
};
/** The parts serve leaves out: --disable's, and those of its older flags (--disable-agent, --disable-scheduler, --no-broker). */
export const disabledParts = (config: Pick<ServeConfig, 'disable' | 'disableAgent' | 'disableScheduler' | 'disableControllerManager' | 'broker'>): Set<string> =>
  new Set([...(config.disable ?? []), ...(config.disableControllerManager ? ['controller-manager'] : []), ...(config.disableAgent ? ['node'] : []), ...(config.disableScheduler ? ['scheduler'] : []), ...(config.broker ? [] : ['broker'])]);
const cidr = (flag: string, example: string) => (raw: unknown): string => {
  if (!parseRange(String(raw))) throw new ConfigError(`--${flag} must be an IPv4 CIDR such as ${example}, got ${String(raw)}`);
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
const GATEWAY_PORT = 8092;
const REGISTRY_PORT = 8093;

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
  row({ key: 'authorizationMode', flag: 'authorization-mode', env: 'CLUSTER_API_AUTHORIZATION_MODE', type: 'string', default: ['Node', 'RBAC'], parse: authorizationModes, describe: 'authorizers in order (default Node,RBAC): Node (node agents: their own Node, Lease, pods and what those pods reference), RBAC, AlwaysAllow (every authenticated request; a warning at start), AlwaysDeny; system:masters is always allowed' }),
  row({ key: 'enableBootstrapTokenAuth', flag: 'enable-bootstrap-token-auth', env: 'CLUSTER_API_ENABLE_BOOTSTRAP_TOKEN_AUTH', type: 'boolean', default: true, parse: bool, describe: 'bootstrap token Secrets (kube-system, type bootstrap.kubernetes.io/token) authenticate as system:bootstrap:<id>, so node agents join by TLS bootstrap (default on, as kubeadm sets it)' }),
  row({ key: 'insecureHttp', flag: 'insecure-http', env: 'CLUSTER_API_INSECURE_HTTP', type: 'boolean', default: false, parse: bool, describe: 'serve plain HTTP (loopback bind addresses only)' }),
  row({ key: 'controllers', flag: 'controllers', env: 'CLUSTER_API_CONTROLLERS', type: 'string', default: ['*'], parse: controllerList, describe: 'controllers to run, as kube-controller-manager\'s flag: * (all on by default), name, -name (e.g. *,-job)' }),
  row({ key: 'disable', flag: 'disable', env: 'CLUSTER_API_DISABLE', type: 'string', default: [], parse: partList, describe: `parts not to run in this process, repeatable or comma-separated: ${Disableable.join(', ')} (each runs alone as its own command)` }),
  row({ key: 'disableControllerManager', flag: 'disable-controller-manager', env: 'CLUSTER_API_DISABLE_CONTROLLER_MANAGER', type: 'boolean', default: ({ config }) => config.disable!.includes('controller-manager'), parse: bool, describe: 'the same as --disable controller-manager: run no controller manager in this process (`cluster-api controller-manager` may run elsewhere); the API server\'s own loops still run' }),
  row({ key: 'leaderElectLeaseDuration', flag: 'leader-elect-lease-duration', env: 'CLUSTER_API_LEADER_ELECT_LEASE_DURATION', type: 'number', default: undefined, parse: count('leader-elect-lease-duration', 2, 3600), describe: 'seconds a controller manager\'s leadership Lease lasts without renewal (default 15; on etcd the API servers elect one)' }),
  row({ key: 'disableAgent', flag: 'disable-agent', env: 'CLUSTER_API_DISABLE_AGENT', type: 'boolean', default: ({ config }) => config.disable!.includes('node'), parse: bool, describe: 'the same as --disable node: run no node agent in this process (nodes join with `cluster-api node`)' }),
  row({ key: 'disableScheduler', flag: 'disable-scheduler', env: 'CLUSTER_API_DISABLE_SCHEDULER', type: 'boolean', default: ({ config }) => config.disable!.includes('scheduler'), parse: bool, describe: 'the same as --disable scheduler: run no scheduler in this process (`cluster-api scheduler` may run elsewhere)' }),
  row({ key: 'nodeName', flag: 'node-name', env: 'CLUSTER_API_NODE_NAME', type: 'string', default: () => hostname().toLowerCase(), parse: text, describe: 'the embedded node agent\'s node name (default: the host name)' }),
  row({ key: 'simulate', flag: 'simulate', env: 'CLUSTER_API_SIMULATE', type: 'boolean', default: true, parse: bool, describe: 'run images that are not function images simulated, as kwok does (default); --no-simulate refuses them' }),
  row({ key: 'maxPods', flag: 'max-pods', env: 'CLUSTER_API_MAX_PODS', type: 'number', default: 110, parse: count('max-pods', 1, 100_000), describe: 'pods the embedded node accepts (default 110)' }),
  row({ key: 'kubeReserved', flag: 'kube-reserved', env: 'CLUSTER_API_KUBE_RESERVED', type: 'string', default: () => parseReserved(DefaultKubeReserved), parse: kubeReserved, describe: `what the embedded node keeps from pods for this process, as the kubelet's --kube-reserved (default ${DefaultKubeReserved})` }),
  row({ key: 'containerLogMaxSize', flag: 'container-log-max-size', env: 'CLUSTER_API_CONTAINER_LOG_MAX_SIZE', type: 'string', default: 10 * 1024 * 1024, parse: containerLogMaxSize, describe: 'the embedded node rotates a container\'s log file past this size (default 10Mi)' }),
  // serve's image layout is its registry's storage too (an image a revision at zero names is in no container): off unless asked.
  ...imageGcRows<ServeConfig>('CLUSTER_API_', 'the embedded node', { percent: 100, why: 'never: its image layout is also the registry\'s storage, where a revision scaled to zero finds its image' }),
  row({ key: 'containerLogMaxFiles', flag: 'container-log-max-files', env: 'CLUSTER_API_CONTAINER_LOG_MAX_FILES', type: 'number', default: 5, parse: count('container-log-max-files', 2, 1000), describe: 'log files the embedded node keeps per container, the current one included (default 5)' }),
  row({ key: 'ociSandboxPool', flag: 'oci-sandbox-pool', env: 'CLUSTER_API_OCI_SANDBOX_POOL', type: 'number', default: 2, parse: count('oci-sandbox-pool', 0, 64), describe: 'pod networks (a namespace with CNI ADD done) the embedded oci node keeps ready, so a pod\'s sandbox waits for no CNI plugin (default 2; 0: none)' }),
  row({ key: 'kubeletPort', flag: 'kubelet-port', env: 'CLUSTER_API_KUBELET_PORT', type: 'number', default: 0, parse: count('kubelet-port', 0, 65535), describe: 'the embedded node agent\'s server port (default 0: any free port, announced in the Node)' }),
  row({ key: 'podNetwork', flag: 'pod-network', env: 'CLUSTER_API_POD_NETWORK', type: 'string', default: undefined, parse: podNetwork, describe: 'loopback (an address per pod, Linux default) or shared (the node\'s address, a port per pod)' }),
  row({ key: 'containerRuntime', flag: 'container-runtime', env: 'CLUSTER_API_CONTAINER_RUNTIME', type: 'string', default: undefined, parse: containerRuntime, describe: 'how the embedded node runs pods: oci (runc in namespaces and cgroups; the default where runc, conmon, the CNI plugins and root are available), process (function images as child processes, not isolated) or simulated (every image as kwok runs it)' }),
  row({ key: 'clusterCidr', flag: 'cluster-cidr', env: 'CLUSTER_API_CLUSTER_CIDR', type: 'string', default: '127.64.0.0/10', parse: cidr('cluster-cidr', '127.64.0.0/10'), describe: 'pod IPs of the cluster, split into a block per node (default 127.64.0.0/10; with the oci runtime a loopback CIDR gives way to a private /16 of 10.0.0.0/8 free of this machine\'s routes)' }),
  row({ key: 'serviceClusterIpRange', flag: 'service-cluster-ip-range', env: 'CLUSTER_API_SERVICE_CLUSTER_IP_RANGE', type: 'string', default: '127.128.0.0/12', parse: cidr('service-cluster-ip-range', '127.128.0.0/12'), describe: 'Service clusterIPs (default 127.128.0.0/12: loopback addresses each node\'s service proxy listens on; with the oci runtime a private /16 instead); must not overlap --cluster-cidr' }),
  row({ key: 'runtimeConfig', flag: 'runtime-config', env: 'CLUSTER_API_RUNTIME_CONFIG', type: 'string', default: undefined, parse: (raw) => {
    try {
      return runtimeConfig(String(raw), allKinds), String(raw);
    } catch (err) {
      throw new ConfigError(`--runtime-config: ${(err as Error).message}`);
    }
  }, describe: 'built-in APIs on or off, as kube-apiserver\'s flag: group/version=true|false, group/version/resource=…, v1 (core), api/all|ga|beta|alpha=true|false (default: every group version served, the legacy ones included)' }),
  row({ key: 'nodeCidrMaskSize', flag: 'node-cidr-mask-size', env: 'CLUSTER_API_NODE_CIDR_MASK_SIZE', type: 'number', default: 20, parse: count('node-cidr-mask-size', 8, 30), describe: 'size of each node\'s pod CIDR block (default 20)' }),
  row({ key: 'nodeLeaseDurationSeconds', flag: 'node-lease-duration-seconds', env: 'CLUSTER_API_NODE_LEASE_DURATION_SECONDS', type: 'number', default: 40, parse: count('node-lease-duration-seconds', 1, 3600), describe: 'the embedded node\'s Lease duration, renewed every quarter of it (default 40)' }),
  row({ key: 'nodeMonitorGracePeriod', flag: 'node-monitor-grace-period', env: 'CLUSTER_API_NODE_MONITOR_GRACE_PERIOD', type: 'number', default: 40, parse: count('node-monitor-grace-period', 1, 86_400), describe: 'seconds a node may go without a heartbeat before it is NotReady (default 40)' }),
  row({ key: 'broker', flag: 'broker', env: 'CLUSTER_API_BROKER', type: 'boolean', default: ({ config }) => !config.disable!.includes('broker'), parse: bool, describe: 'run the event broker (Knative Brokers and Triggers) in this process; --no-broker (the same as --disable broker) turns it off' }),
  row({ key: 'brokerStore', flag: 'broker-store', env: 'CLUSTER_API_BROKER_STORE', type: 'string', default: (at) => `sqlite:${inDataDir('broker.db')(at)}`, parse: brokerStoreUrl, describe: 'the broker\'s event log: sqlite:<file> (default <data-dir>/broker.db) or nats://host:port[,host:port…][?replicas=N]' }),
  row({ key: 'brokerPort', flag: 'broker-port', env: 'CLUSTER_API_BROKER_PORT', type: 'number', default: ({ config }) => (config.port === 0 ? 0 : BROKER_PORT), parse: portOf('broker-port'), describe: `port of the broker's ingress (default ${BROKER_PORT}; a free one when --port is 0)` }),
  row({ key: 'gatewayPort', flag: 'gateway-port', env: 'CLUSTER_API_GATEWAY_PORT', type: 'number', default: ({ config }) => (config.port === 0 ? 0 : GATEWAY_PORT), parse: portOf('gateway-port'), describe: `port of the ingress gateway that routes Knative Routes' hosts to their revisions (default ${GATEWAY_PORT}; a free one when --port is 0)` }),
  row({ key: 'registryPort', flag: 'registry-port', env: 'CLUSTER_API_REGISTRY_PORT', type: 'number', default: ({ config }) => (config.port === 0 ? 0 : REGISTRY_PORT), parse: portOf('registry-port'), describe: `port of the OCI distribution registry over the node's image store, advertised in kube-public/local-registry-hosting (default ${REGISTRY_PORT}; a free one when --port is 0)` }),
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
  brokerRow({ key: 'gatewayUrl', flag: 'gateway-url', env: 'CLUSTER_API_BROKER_GATEWAY_URL', type: 'string', default: undefined, parse: baseUrl('gateway-url'), describe: 'the serving gateway (http://host:port) that Triggers\' Knative Service subscribers and asynchronous invocations go through (default: none; serve\'s broker uses serve\'s gateway)' }),
];

/** `cluster-api controller-manager`: the controllers of `serve`, in a process of their own, by kubeconfig. */
export interface ControllerManagerConfig extends Pick<ServeConfig, 'controllers' | 'clusterCidr' | 'nodeCidrMaskSize' | 'nodeMonitorGracePeriod' | 'leaderElectLeaseDuration'> {
  kubeconfig?: string;
  context?: string;
  leaderElect: boolean;
  useServiceAccountCredentials: boolean;
}

const cmRow = <K extends keyof ControllerManagerConfig>(r: OptionRow<ControllerManagerConfig, K>): OptionRow<ControllerManagerConfig, K> => r;
const sharedWithServe: readonly (keyof ControllerManagerConfig)[] = ['controllers', 'clusterCidr', 'nodeCidrMaskSize', 'nodeMonitorGracePeriod', 'leaderElectLeaseDuration'];

export const controllerManagerOptions: readonly AnyRow<ControllerManagerConfig>[] = [
  cmRow({ key: 'kubeconfig', flag: 'kubeconfig', env: 'CLUSTER_API_CONTROLLER_MANAGER_KUBECONFIG', type: 'string', default: undefined, parse: path, describe: 'the controller manager\'s credentials for the API server (default: KUBECONFIG, ~/.kube/config, or in-cluster)' }),
  cmRow({ key: 'context', flag: 'context', env: 'CLUSTER_API_CONTROLLER_MANAGER_CONTEXT', type: 'string', default: undefined, parse: text, describe: 'kubeconfig context (default: its current-context)' }),
  cmRow({ key: 'leaderElect', flag: 'leader-elect', env: 'CLUSTER_API_LEADER_ELECT', type: 'boolean', default: true, parse: bool, describe: 'run the controllers only while holding the kube-system/kube-controller-manager Lease (default true; --no-leader-elect for a single manager)' }),
  cmRow({ key: 'useServiceAccountCredentials', flag: 'use-service-account-credentials', env: 'CLUSTER_API_USE_SERVICE_ACCOUNT_CREDENTIALS', type: 'boolean', default: true, parse: bool, describe: 'each controller acts as its kube-system ServiceAccount, with tokens requested by the manager\'s credentials (default true); --no-use-service-account-credentials: all act as the kubeconfig\'s user' }),
  ...(serveOptions.filter((r) => sharedWithServe.includes(r.key as keyof ControllerManagerConfig)) as readonly AnyRow<ServeConfig>[] as unknown as readonly AnyRow<ControllerManagerConfig>[]),
];

export function resolveControllerManagerConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): ControllerManagerConfig {
  return resolveRows(controllerManagerOptions, cli, env, cwd);
}

const isLoopback = (address: string): boolean =>
  address === 'localhost' || address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));


/** Pure: the same inputs always give the same config or the same ConfigError. */
export function resolveConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): ServeConfig {
  return check(resolveRows(serveOptions, cli, env, cwd));
}

export function resolveBrokerConfig(cli: Record<string, unknown>, env: Record<string, string | undefined> = {}, cwd = '.'): BrokerRoleConfig {
  return resolveRows(brokerOptions, cli, env, cwd);
}

/** Rules between options. */
function check(config: ServeConfig): ServeConfig {
  imageGcPolicy(config);
  if (config.insecureHttp && !isLoopback(config.bindAddress))
    throw new ConfigError(`--insecure-http is only allowed on a loopback bind address, not ${config.bindAddress}`);
  if (config.insecureHttp && (config.tlsCertFile || config.tlsPrivateKeyFile))
    throw new ConfigError('--insecure-http cannot be combined with --tls-cert-file / --tls-private-key-file');
  if (Boolean(config.tlsCertFile) !== Boolean(config.tlsPrivateKeyFile))
    throw new ConfigError('--tls-cert-file and --tls-private-key-file must be given together');
  if (config.tlsCaFile && !config.tlsCertFile) throw new ConfigError('--tls-ca-file goes with --tls-cert-file (the generated CA is embedded already)');
  if (!config.disableAgent && !config.authorizationMode.some((m) => m === 'Node' || m === 'AlwaysAllow'))
    throw new ConfigError(`--authorization-mode ${config.authorizationMode.join(',')} gives the embedded node agent no way to register its Node: add Node (e.g. Node,${config.authorizationMode.join(',')}) or pass --disable-agent (--disable node)`);
  if (Boolean(config.etcdCertfile) !== Boolean(config.etcdKeyfile))
    throw new ConfigError('--etcd-certfile and --etcd-keyfile must be given together');
  if (Number(config.clusterCidr.split('/')[1]) > config.nodeCidrMaskSize)
    throw new ConfigError(`--node-cidr-mask-size ${config.nodeCidrMaskSize} must be at least the --cluster-cidr prefix length (${config.clusterCidr})`);
  if (rangesOverlap(config.serviceClusterIpRange, config.clusterCidr))
    throw new ConfigError(`--service-cluster-ip-range ${config.serviceClusterIpRange} overlaps --cluster-cidr ${config.clusterCidr}: Service and pod IPs must not share addresses`);
  return config;
}
