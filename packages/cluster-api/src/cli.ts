#!/usr/bin/env node
/**
 * The cluster-api command: `cluster-api serve`, `node`, `scheduler`, `controller-manager`,
 * `node-credentials`, `broker`, `migrate`. The only file that reads argv/env for configuration, installs signal handlers and ends
 * the process; everything else is a library that tests embed.
 */
import { KubeClient, KubeConnectionError, KubeconfigError } from '@func/kube-client';
import { ApiError } from './api/errors.js';
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { parseAdvertised } from './broker/cluster/advertise.js';
import { BrokerStartError } from './broker/cluster/embedded.js';
import { startClusterBroker } from './broker/cluster/start.js';
import { baseUrl, brokerOptions, ConfigError, controllerManagerOptions, resolveBrokerConfig, resolveConfig, resolveControllerManagerConfig, serveOptions } from './config.js';
import { runControllerManager } from './controllers/standalone.js';
import { TokenFileError } from './auth/authenticator.js';
import { TlsFileError } from './auth/tls.js';
import { migrate, migrateArgs, migrateOptions } from './migrate.js';
import { chooseContainerRuntime } from './node/runtime/choose.js';
import { serve } from './server.js';
import { nodeOptions, resolveNodeConfig } from './node/config.js';
import { runNode } from './node/run.js';
import { NodeCredentialsError, nodeKubeconfig } from './auth/node-credentials.js';
import { brokerPart, gatewayPart, nodePart, schedulerPart } from './serve/embedded.js';
import { httpClient } from './client/http.js';
import { startGateway, type Gateway } from './serving/gateway/gateway.js';
import { httpInvocationQueue } from './serving/gateway/async.js';
import { ListenerStartError } from './serve/listener.js';
import { messageOf, part, type Part } from './serve/part.js';
import { PartError, Supervisor } from './serve/supervisor.js';
import { BootstrapError } from './certificates/bootstrap-client.js';
import { TokenCreateError, createBootstrapToken } from './certificates/token-create.js';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const log = (entry: Record<string, unknown>): void => {
  process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), ...entry })}\n`);
};

function fail(err: unknown): never {
  // A part that could not start: its own known error's words (a port in use, a bad kubeconfig), else the part's one line.
  const cause = err instanceof PartError ? err.cause : undefined;
  const e = (cause !== undefined && isKnown(cause) ? cause : err) as Error;
  const known = isKnown(e) || e instanceof PartError;
  // The operator reads what a client never may: what failed below (storage unreachable at start-up).
  const below = !(e instanceof PartError) && e?.cause instanceof Error ? `: ${e.cause.message}` : '';
  process.stderr.write(`cluster-api: ${known ? `${e.message}${below}` : (e?.stack ?? String(err))}\n`);
  process.exit(1);
}

function isKnown(e: unknown): boolean {
  return e instanceof ConfigError || e instanceof ListenerStartError || e instanceof TokenFileError || e instanceof TlsFileError || e instanceof NodeCredentialsError || e instanceof KubeconfigError ||
    e instanceof KubeConnectionError || e instanceof ApiError ||
    e instanceof BrokerStartError || e instanceof BootstrapError || e instanceof TokenCreateError || (e as NodeJS.ErrnoException)?.code !== undefined;
}

/** What runs in this process: its parts' supervisor, once there is one. */
let supervisor: Supervisor | undefined;
let stopping = false;

/**
 * The last resort of the commands that serve (serve and the role commands, not the one-shot ones):
 * an error nothing caught is logged, with the part whose code it came from when its stack says so
 * (that part is restarted, or the process ends as for any failure of it); the rest keeps serving.
 */
function keepServing(): void {
  const stray = (what: string) => (err: unknown): void => {
    if (supervisor) supervisor.stray(err, what);
    else log({ level: 'error', msg: what, error: messageOf(err), ...(err instanceof Error && err.stack && { stack: err.stack }) });
  };
  process.on('unhandledRejection', stray('unhandled rejection'));
  process.on('uncaughtException', stray('uncaught exception'));
}

/** A part that cannot go on: one line naming it, the others stopped in reverse, exit 1. */
function fatal(message: string): void {
  if (stopping) return;
  stopping = true;
  process.stderr.write(`cluster-api: ${message}\n`);
  setTimeout(() => process.exit(1), 10_000).unref();
  void (supervisor?.stop() ?? Promise.resolve()).finally(() => process.exit(1));
}

/** A role command: its one part under the same supervisor as serve's. */
async function runAlone(p: Part): Promise<void> {
  keepServing();
  const running = new Supervisor([p], { log, fatal, firstStartFails: true });
  await running.start();
  supervisor = running;
  untilSignal(() => running.stop());
}

/**
 * A command's options from its table. Numbers reach the table's parse as typed, so `--port eighty` is
 * refused naming `eighty`, not NaN.
 */
const optionsOf = (rows: readonly { flag: string; type: 'string' | 'number' | 'boolean'; describe: string }[]) => <Y extends Argv>(y: Y): Y => {
  for (const row of rows) y.option(row.flag, { type: row.type === 'number' ? 'string' : row.type, describe: row.describe });
  return y;
};

/** Runs until SIGTERM / SIGINT, then `stop()` and exit 0. */
function untilSignal(stop: () => Promise<void>): void {
  const end = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log({ level: 'info', msg: 'shutting down', signal });
    stop().then(() => process.exit(0), fail);
  };
  process.once('SIGTERM', () => end('SIGTERM'));
  process.once('SIGINT', () => end('SIGINT'));
}

async function nodeCommand(argv: Record<string, unknown>): Promise<void> {
  const config = resolveNodeConfig(argv, process.env, process.cwd());
  let agent: Awaited<ReturnType<typeof runNode>> | undefined;
  await runAlone(nodePart(async () => (agent = await runNode(config, log))));
  log({ level: 'info', msg: 'node agent running', node: agent?.name, kubeletPort: agent?.port, dataDir: config.dataDir });
}

async function schedulerCommand(argv: Record<string, unknown>): Promise<void> {
  const kube = KubeClient.fromKubeconfig({ kubeconfig: argv.kubeconfig as string | undefined, context: argv.context as string | undefined });
  await runAlone(schedulerPart(() => httpClient(kube), { elect: false, schedulerName: argv['scheduler-name'] as string | undefined, log }));
  log({ level: 'info', msg: 'scheduler running' });
}

async function gatewayCommand(argv: Record<string, unknown>): Promise<void> {
  const port = Number(argv.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`--port: ${JSON.stringify(String(argv.port))} is not a port (0-65535)`);
  const kube = KubeClient.fromKubeconfig({ kubeconfig: argv.kubeconfig as string | undefined, context: argv.context as string | undefined });
  const brokerUrl = argv['broker-url'] === undefined ? undefined : baseUrl('broker-url')(argv['broker-url']);
  const asyncQueue = brokerUrl ? httpInvocationQueue(() => brokerUrl) : undefined;
  let running: Gateway | undefined;
  await runAlone(gatewayPart(async () => (running = await startGateway({ kube, host: String(argv['bind-address']), port, log, ...(asyncQueue && { asyncQueue: () => asyncQueue }) }, '--port'))));
  log({ level: 'info', msg: 'listening', gateway: running?.url, apiServer: kube.connection.server });
}

async function controllerManagerCommand(argv: Record<string, unknown>): Promise<void> {
  const config = resolveControllerManagerConfig(argv, process.env, process.cwd());
  const kube = KubeClient.fromKubeconfig({ kubeconfig: config.kubeconfig, context: config.context });
  await runAlone(part('controller-manager', async () => {
    const manager = await runControllerManager(kube, config, log);
    return { stop: async () => (await manager.stop(), kube.close()) };
  }, { source: new URL('./controllers/', import.meta.url) }));
  log({ level: 'info', msg: 'controller-manager running', apiServer: kube.connection.server, leaderElect: config.leaderElect });
}

function nodeCredentialsCommand(argv: Record<string, unknown>): void {
  const addresses = ([] as unknown[]).concat(argv.address ?? []).map(String);
  const yaml = nodeKubeconfig({ dataDir: resolve(String(argv['data-dir'] ?? './data')), name: String(argv.name ?? ''), addresses, server: argv.server as string | undefined });
  if (argv.out) writeFileSync(resolve(String(argv.out)), yaml, { mode: 0o600 });
  else process.stdout.write(yaml);
  process.exit(0);
}

async function serveCommand(argv: Record<string, unknown>): Promise<void> {
  const resolved = resolveConfig(argv, process.env, process.cwd());
  const chosen = resolved.disableAgent ? undefined : chooseContainerRuntime(resolved.containerRuntime);
  if (chosen?.warning) log({ level: 'warn', msg: chosen.warning });
  const config = { ...resolved, containerRuntime: chosen?.runtime };
  keepServing();
  const { server, kubeconfig, broker, gateway, registry, supervisor: parts, containerRuntime } = await serve(config, log, { fatal });
  supervisor = parts;
  untilSignal(() => server.close());
  // Logged last: whoever waits for this line may signal the process at once.
  log({ level: 'info', msg: 'listening', url: server.url, storage: config.storage.split(':', 1)[0], kubeconfig, ...(containerRuntime ? { containerRuntime } : {}), ...(broker ? { broker: broker.broker.url } : {}), ...(gateway ? { gateway: gateway.url } : {}), ...(registry ? { registry: registry.host } : {}) });
}

async function brokerCommand(argv: Record<string, unknown>): Promise<void> {
  const config = resolveBrokerConfig(argv, process.env, process.cwd());
  const client = KubeClient.fromKubeconfig({ kubeconfig: config.kubeconfig, context: config.context });
  let running: Awaited<ReturnType<typeof startClusterBroker>> | undefined;
  await runAlone(brokerPart(async () => (running = await startClusterBroker({
    client, store: config.brokerStore, port: config.port, host: config.bindAddress,
    advertise: config.advertiseAddress === undefined ? undefined : parseAdvertised(config.advertiseAddress),
    ...(config.gatewayUrl ? { gatewayUrl: () => config.gatewayUrl } : {}),
    logger: (level, msg, fields) => log({ level, msg, ...fields }),
  }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'EADDRINUSE') throw new BrokerStartError(`port ${config.port} on ${config.bindAddress} is in use: pick another with --port`);
    throw new BrokerStartError(`the broker did not start: ${err.message}`);
  }))));
  log({ level: 'info', msg: 'listening', url: running?.broker.url, store: config.brokerStore.split(':', 1)[0], apiServer: client.connection.server });
}

await yargs(hideBin(process.argv))
  .scriptName('cluster-api')
  .command(
    'serve',
    'serve the cluster resource API (TLS, a generated CA, admin token and kubeconfig by default)',
    optionsOf(serveOptions),
    (argv) => serveCommand(argv).catch(fail),
  )
  .command(
    'node',
    'run a node agent joining an API server by kubeconfig (function pods as processes, others simulated)',
    optionsOf(nodeOptions),
    (argv) => nodeCommand(argv).catch(fail),
  )
  .command(
    'gateway',
    'run the ingress gateway (Knative Routes by Host) against an API server by kubeconfig (serve runs one unless --disable gateway)',
    (y) => y.option('kubeconfig', { type: 'string', describe: 'kubeconfig file (default: kubectl\'s rules)' }).option('context', { type: 'string' })
      .option('port', { type: 'string', default: '8092', describe: 'port of the gateway (0 picks a free one)' })
      .option('bind-address', { type: 'string', default: '127.0.0.1', describe: 'address of the gateway' })
      .option('broker-url', { type: 'string', describe: 'the broker (http://host:port, `cluster-api broker --gateway-url` this gateway) whose queue takes requests that prefer respond-async (default: none: they are served synchronously)' }),
    (argv) => gatewayCommand(argv).catch(fail),
  )
  .command(
    'scheduler',
    'run the scheduler against an API server by kubeconfig (serve runs one unless --disable-scheduler)',
    (y) => y.option('kubeconfig', { type: 'string', describe: 'kubeconfig file (default: kubectl\'s rules)' }).option('context', { type: 'string' }).option('scheduler-name', { type: 'string', describe: 'the spec.schedulerName it serves (default default-scheduler)' }),
    (argv) => schedulerCommand(argv).catch(fail),
  )
  .command(
    'controller-manager',
    'run the controllers against an API server by kubeconfig, as kube-controller-manager (serve runs them unless --disable-controller-manager)',
    optionsOf(controllerManagerOptions),
    (argv) => controllerManagerCommand(argv).catch(fail),
  )
  .command(
    'node-credentials',
    'mint a kubeconfig for a node agent on another machine (client certificate CN system:node:<name>, O system:nodes)',
    (y) => y
      .option('name', { type: 'string', demandOption: true, describe: 'the node name' })
      .option('address', { type: 'string', array: true, describe: 'the node\'s IP addresses or DNS names (its kubelet server certificate names them)' })
      .option('data-dir', { type: 'string', describe: 'the server\'s data directory, which holds the CA (default ./data)' })
      .option('server', { type: 'string', describe: 'the API server URL as the node reaches it (default: the data dir kubeconfig\'s)' })
      .option('out', { type: 'string', describe: 'write the kubeconfig here (mode 0600) instead of stdout' }),
    (argv) => {
      try {
        nodeCredentialsCommand(argv);
      } catch (err) {
        fail(err);
      }
    },
  )
  .command(
    'token',
    'bootstrap tokens, as kubeadm token: `token create` stores a new one in kube-system and prints it (nodes join with it by TLS bootstrap)',
    (y) => y.command(
      'create',
      'store a new bootstrap token (Secret kube-system/bootstrap-token-<id>) through the kubeconfig and print it',
      (c) => c
        .option('kubeconfig', { type: 'string', describe: 'an administrator\'s kubeconfig (default: kubectl\'s rules)' })
        .option('context', { type: 'string' })
        .option('ttl', { type: 'string', default: '24h', describe: 'how long the token is valid (a duration: 24h, 30m; 0: never expires)' })
        .option('description', { type: 'string' })
        .option('groups', { type: 'string', array: true, describe: 'extra groups, each system:bootstrappers:… (default system:bootstrappers:kubeadm:default-node-token)' })
        .option('bootstrap-kubeconfig-out', { type: 'string', describe: 'also write a kubeconfig holding the token (mode 0600), for cluster-api node --bootstrap-kubeconfig' }),
      (argv) => createBootstrapToken({
        kubeconfig: argv.kubeconfig, context: argv.context, ttl: argv.ttl, description: argv.description, groups: argv.groups?.map(String),
        bootstrapKubeconfigOut: argv['bootstrap-kubeconfig-out'],
      }).then((token) => void process.stdout.write(`${token}\n`), fail),
    ).demandCommand(1),
  )
  .command(
    'broker',
    'run the event broker alone: Knative Brokers and Triggers read from an API server by kubeconfig (several processes share a nats:// store)',
    optionsOf(brokerOptions),
    (argv) => brokerCommand(argv).catch(fail),
  )
  .command(
    'migrate',
    'copy every object from one storage to another (e.g. sqlite: → etcd://); content kept, resourceVersions new',
    migrateOptions,
    (argv) =>
      migrate(migrateArgs(argv), (done) => log({ level: 'info', msg: 'migrating', done })).then((result) => {
        process.stdout.write(`${JSON.stringify(result)}\n`);
        process.exit(0);
      }, fail),
  )
  .demandCommand(1)
  .strict()
  .help()
  .version(false)
  .fail((msg, err) => {
    process.stderr.write(`cluster-api: ${msg ?? err?.message}\nRun cluster-api --help for usage.\n`);
    process.exit(2);
  })
  .parseAsync();
