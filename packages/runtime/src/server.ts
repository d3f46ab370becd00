/**
 * The HTTP server: node:http dispatching by path. Function requests go straight to the invoke
 * handler; GET/HEAD on the probe and metrics paths go to their handlers. No Express: measured
 * here, loading Express 5 for the first readiness probe cost ~200 ms of CPU (more than the rest
 * of start-up), and Knative gates a new replica on that probe. Express stays supported the other
 * way round: createHandler() mounts inside any Express app as middleware.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { healthPaths, livenessHandler, monitorEventLoop, readinessHandler } from './health.js';
import { createInvokeHandler, type NodeHandler } from './invoke.js';
import { originForm } from './request-target.js';
import type { Runtime } from './runtime.js';

type Route = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

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

function pathOf(target: string | undefined): string {
  const url = originForm(target);
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The dispatcher: (req, res, next?) usable by node:http or as Express middleware. GET and HEAD on
 * the health and metrics paths answer from the runtime; everything else reaches `handle`.
 */
export function createDispatcher(rt: Runtime): NodeHandler {
  const invoke = createInvokeHandler(rt);
  const paths = healthPaths(rt);
  const routes = new Map<string, Route>([
    [paths.liveness, livenessHandler(rt)],
    [paths.readiness, readinessHandler(rt)],
    [rt.options.metricsPath, metricsHandler(rt)],
  ]);
  return function dispatch(req: IncomingMessage, res: ServerResponse) {
    const route = routes.get(pathOf(req.url));
    if (route !== undefined && (req.method === 'GET' || req.method === 'HEAD')) {
      void route(req, res);
      return;
    }
    invoke(req, res);
  };
}

/** A node:http server for the runtime, not yet listening. */
export function createRuntimeServer(rt: Runtime): Server {
  const server = createHttpServer(createDispatcher(rt));
  const stopMonitor = monitorEventLoop(rt);
  server.once('close', stopMonitor);
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
