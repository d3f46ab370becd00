/**
 * The HTTP server: node:http dispatching by path. Function requests go straight to the invoke
 * handler; GET/HEAD on the probe and metrics paths go to their handlers. No Express: measured
 * here, loading Express 5 for the first readiness probe cost ~200 ms of CPU (more than the rest
 * of start-up), and Knative gates a new replica on that probe. Express stays supported the other
 * way round: createHandler() mounts inside any Express app as middleware.
 */
import { Buffer } from 'node:buffer';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { healthPaths, livenessHandler, monitorEventLoop, readinessHandler } from './health.js';
import { createInvokeHandler, type NodeHandler } from './invoke.js';
import { pathOf } from './request-target.js';
import type { Runtime } from './runtime.js';

type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Where the autoscaler reads this replica's load (GET, Prometheus text): the gauges Knative's
 * queue-proxy reports under the same names, `queue_average_concurrent_requests` (requests in
 * progress or waiting for a containerConcurrency slot, time-averaged) and
 * `queue_requests_per_second`, both over the period since the previous read.
 */
export const AutoscalingStatsPath = '/metrics/autoscaling';

function statsHandler(rt: Runtime): Route {
  return async (_req, res) => {
    const r = rt.inflight.report();
    const text = `# TYPE queue_average_concurrent_requests gauge\nqueue_average_concurrent_requests ${r.averageConcurrency}\n`
      + `# TYPE queue_requests_per_second gauge\nqueue_requests_per_second ${r.requestsPerSecond}\n`;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) }).end(text);
  };
}

function metricsHandler(rt: Runtime): Route {
  return async (_req, res) => {
    try {
      const text = await rt.metrics.text();
      res.writeHead(200, { 'content-type': rt.metrics.contentType, 'content-length': Buffer.byteLength(text) });
      res.end(text);
    } catch (err) {
      rt.logger.error({ err }, 'metrics collection failed');
      res.writeHead(500, { 'content-length': 0 }).end();
    }
  };
}

/**
 * The dispatcher: (req, res, next?) usable by node:http or as Express middleware. GET and HEAD on
 * the health and metrics paths answer from the runtime; everything else reaches `handle`.
 */
export function createDispatcher(rt: Runtime): NodeHandler {
  const invoke = createInvokeHandler(rt);
  const paths = healthPaths(rt);
  const liveness = livenessHandler(rt);
  const readiness = readinessHandler(rt);
  const metrics = metricsHandler(rt);
  const stats = statsHandler(rt);
  const metricsPath = rt.options.metricsPath;
  // Four comparisons cost less than hashing every request's path for a map lookup; where two
  // paths are configured alike, metrics wins, then readiness.
  const routeOf = (path: string): Route | undefined =>
    path === metricsPath ? metrics : path === paths.readiness ? readiness : path === paths.liveness ? liveness : path === AutoscalingStatsPath ? stats : undefined;
  // A target shorter than every one of those paths names none of them (node:http's targets are never
  // empty; the absolute form is longer still), so most requests skip the path's extraction.
  const shortest = Math.min(metricsPath.length, paths.readiness.length, paths.liveness.length, AutoscalingStatsPath.length);
  return function dispatch(req: IncomingMessage, res: ServerResponse) {
    // Draining: every answer closes its connection, so a kept-alive client (or a service proxy that
    // pinned its connection here) comes back on a new one, which reaches a ready replica.
    if (rt.state.shuttingDown) res.shouldKeepAlive = false;
    const url = req.url ?? '/';
    const route = (req.method === 'GET' || req.method === 'HEAD') && url.length >= shortest ? routeOf(pathOf(url)) : undefined;
    if (route !== undefined) void route(req, res);
    else invoke(req, res);
  };
}

/** What a server serves: one function's runtime, or (dev) a reloader that swaps runtimes behind one listener. */
export interface Served {
  /** The runtime now serving. */
  runtime(): Runtime;
  listener: RequestListener;
  /** Called once when the server has closed. */
  closed(): void;
  /** Releases what serving holds besides the server, when listening fails. */
  dispose?(): Promise<void>;
}

/** One function: its dispatcher, the event-loop monitor its readiness reads, and `shutdown` once the server stops (spec 001). */
export function serveFunction(rt: Runtime): Served {
  const stopMonitor = monitorEventLoop(rt);
  return {
    runtime: () => rt,
    listener: createDispatcher(rt),
    closed() {
      stopMonitor();
      rt.shutdown().catch((err: unknown) => rt.logger.error({ err }, 'the function\'s shutdown hook failed'));
    },
    dispose: async () => stopMonitor(),
  };
}

/** A node:http server for `served`, not yet listening. */
export function serverFor(served: Served): Server {
  const server = createHttpServer(served.listener);
  server.once('close', () => served.closed());
  return server;
}

export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    const done = () => {
      server.off('error', onError);
      resolve();
    };
    if (host) server.listen(port, host, done);
    else server.listen(port, done);
  });
}
