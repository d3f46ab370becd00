/**
 * `startBroker`: the broker as one running thing — the event log, the control loop, the Trigger
 * deliveries and the HTTP ingress (with `/healthz` and `/metrics`). `cluster-api broker` and
 * `cluster-api serve` start it with an API-backed TriggerSource; tests and embedders pass their own.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FailureRecorder } from './dispatch/worker.js';
import { DEBUG_PATH, type DebugAuth, debugHandler } from './debug/api.js';
import { Journal } from './debug/journal.js';
import { ingressHandler } from './ingress.js';
import { INVOCATIONS_PATH, invocationIngress } from './invocation/ingress.js';
import { type InvocationQueue, invocationQueue } from './invocation/queue.js';
import { Invoker, type InvokerDeps } from './invocation/invoker.js';
import { openEventLog } from './log/factory.js';
import type { EventLog } from './log/interface.js';
import { BrokerMetrics, jsonLogger, type Logger } from './metrics.js';
import { Reconciler } from './reconcile.js';
import { noResolver, type SubscriberResolver } from './resolver.js';
import type { TriggerSource } from './source.js';
import type { Router } from './dispatch/cluster-hosts.js';

export interface BrokerOptions {
  /** `sqlite:<file>` or `nats://host:port[,…][?replicas=N]`. */
  readonly store: string;
  readonly triggerSource: TriggerSource;
  /** Resolves `subscriber.ref` and `deadLetterSink.ref`; without one only `uri` destinations work. */
  readonly resolver?: SubscriberResolver;
  /** Default 0: a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /**
   * The base of Brokers' `status.address.url`; default `http://<host>:<port>`. A function gets the
   * port bound (port 0 picks one), for an address advertised in place of the bind address.
   */
  readonly ingressBaseUrl?: string | ((port: number) => string);
  /** Largest request body at the ingress and largest reply read back. Default 1 MiB. */
  readonly maxEventBytes?: number;
  /** Events accepted and not yet stored before the ingress answers 429. Default 20,000. */
  readonly maxPendingEvents?: number;
  /** Deliveries in flight per Trigger (per process). Default 64. */
  readonly maxInFlightPerTrigger?: number;
  /** How long a delivery may hold a message before another process may take it. Default 60 s. */
  readonly ackWaitMs?: number;
  /** How often the control loop retries what failed (streams, resolution). Default 5 s. */
  readonly resyncMs?: number;
  readonly logger?: Logger;
  /**
   * Asynchronous invocations of functions (`POST /invocations/{ns}/{fn}`, invocation/): run through
   * the serving gateway at `gatewayUrl`, with the function's DeliverySpec from `policyOf`. Absent:
   * not served (404).
   */
  readonly invocations?: Pick<InvokerDeps, 'gatewayUrl' | 'policyOf'>;
  /**
   * Serves the event debugger (`/debug/v1/…`, debug/api.ts), authenticating and authorizing each
   * request through it (the cluster broker: TokenReview and SubjectAccessReview). Absent: not served.
   */
  readonly debugAuth?: DebugAuth;
  /**
   * Write each step of each event to the log's journal (debug/journal.ts), which the debugger reads.
   * Default true; false saves its writes (about one row or message per step) where no one debugs.
   */
  readonly journal?: boolean;
  /** Records a Trigger's failed delivery for its users (the cluster broker: a Warning Event on the Trigger). */
  readonly recordFailure?: FailureRecorder;
  /** Where subscriber URLs the broker cannot reach itself are sent (the cluster broker in serve: cluster-local names through the gateway). */
  readonly router?: Router;
}

export interface RunningBroker {
  /** `http://host:port`. */
  readonly url: string;
  readonly port: number;
  readonly metrics: BrokerMetrics;
  readonly log: EventLog;
  /** Stores asynchronous invocations (`serve`'s gateway calls it in-process); undefined without `invocations`. */
  readonly invocations?: InvocationQueue;
  /** Resolves once the current Brokers and Triggers are programmed and their status written. */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

function serve(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server.address() as AddressInfo));
  });
}

export async function startBroker(opts: BrokerOptions): Promise<RunningBroker> {
  const logger = opts.logger ?? jsonLogger;
  const metrics = new BrokerMetrics();
  const maxEventBytes = opts.maxEventBytes ?? 1024 * 1024;
  const log = await openEventLog(opts.store);
  // The reconciler starts once the ingress listens, so the first status written is addressable.
  let reconciler: Reconciler | undefined;
  const journal = opts.journal === false ? undefined : new Journal(log, logger);
  const ingress = ingressHandler({
    ...(journal ? { journal } : {}),
    log,
    metrics,
    logger,
    stream: (k) => (reconciler ? reconciler.stream(k) : { ready: false }),
    maxEventBytes,
    maxPendingEvents: opts.maxPendingEvents ?? 20_000,
  });
  const maxInFlight = opts.maxInFlightPerTrigger ?? 64;
  const ackWaitMs = opts.ackWaitMs ?? 60_000;
  const invoker = opts.invocations && new Invoker({ log, metrics, logger, resolver: opts.resolver ?? noResolver, maxInFlight, ackWaitMs, maxEventBytes, ...opts.invocations });
  const queue = invoker && invocationQueue({ log, metrics, logger, maxEventBytes, maxPending: opts.maxPendingEvents ?? 20_000, ready: () => invoker.ready });
  const invocations = queue && invocationIngress(queue);
  const debug = opts.debugAuth && journal && debugHandler({
    log, journal, logger, auth: opts.debugAuth,
    brokerReady: (key) => reconciler?.stream(key)?.ready,
    trigger: (ns, name) => reconciler?.trigger(ns, name),
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (debug && req.url?.startsWith(DEBUG_PATH)) return void debug(req, res).catch((err: Error) => failed(res, err));
    if (invocations && req.url?.startsWith(INVOCATIONS_PATH)) return void invocations(req, res).catch((err: Error) => failed(res, err));
    if (req.method === 'GET' && req.url === '/healthz') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    if (req.method === 'GET' && req.url === '/metrics') return void res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(metrics.prometheus());
    ingress(req, res).catch((err: Error) => failed(res, err));
  });
  const failed = (res: ServerResponse, err: Error) => {
    logger('error', 'ingress request failed', { error: err.message });
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/problem+json' }).end('{"title":"Internal Server Error","status":500}');
    else res.destroy();
  };
  server.keepAliveTimeout = 65_000;
  let address: AddressInfo;
  try {
    address = await serve(server, opts.port ?? 0, opts.host ?? '127.0.0.1');
  } catch (err) {
    await invoker?.stop();
    await log.close();
    throw err;
  }
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  const advertised = typeof opts.ingressBaseUrl === 'function' ? opts.ingressBaseUrl(address.port) : opts.ingressBaseUrl;
  const base = (advertised ?? url).replace(/\/+$/, '');
  const running = new Reconciler({
    log,
    metrics,
    logger,
    source: opts.triggerSource,
    resolver: opts.resolver ?? noResolver,
    address: (stream) => `${base}/${stream.split('/').map(encodeURIComponent).join('/')}`,
    resyncMs: opts.resyncMs ?? 5_000,
    maxInFlight,
    ackWaitMs,
    maxEventBytes,
    ...(journal ? { journal } : {}),
    ...(opts.recordFailure ? { recordFailure: opts.recordFailure } : {}),
    ...(opts.router ? { router: opts.router } : {}),
  });
  reconciler = running;
  logger('info', 'broker listening', { url, store: log.engine });
  return {
    url,
    port: address.port,
    metrics,
    log,
    ...(queue ? { invocations: queue } : {}),
    settled: () => running.settled(),
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Requests still being stored get a moment to finish; then every connection goes.
      const force = setTimeout(() => server.closeAllConnections(), 2_000);
      await closed;
      clearTimeout(force);
      await running.stop();
      await invoker?.stop();
      await log.close();
    },
  };
}
