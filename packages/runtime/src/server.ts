/**
 * The HTTP server. Requests for the function go straight from node:http to the invoke handler;
 * only the health and metrics paths go through the Express app, built on the first such request,
 * so the hot path never pays for Express's request augmentation and start-up never loads it.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Express } from 'express';
import { healthPaths, livenessHandler, monitorEventLoop, readinessHandler } from './health.js';
import { createInvokeHandler, type NodeHandler } from './invoke.js';
import type { Runtime } from './runtime.js';

const requireLazy = createRequire(import.meta.url);

function buildApp(rt: Runtime, invoke: NodeHandler): Express {
  const express = requireLazy('express') as typeof import('express');
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const paths = healthPaths(rt);
  app.get(paths.liveness, livenessHandler(rt));
  app.get(paths.readiness, readinessHandler(rt));
  app.get(rt.options.metricsPath, async (_req, res) => {
    try {
      const text = await rt.metrics.text();
      res.writeHead(200, { 'content-type': rt.metrics.contentType });
      res.end(text);
    } catch (err) {
      rt.logger.error({ err }, 'metrics collection failed');
      res.writeHead(500).end();
    }
  });
  // A non-GET request to an operational path is the function's business.
  app.use((req, res) => invoke(req, res));
  return app;
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/**
 * The dispatcher: (req, res, next?) usable by node:http or as Express middleware. Health and
 * metrics paths answer from the operational app; everything else reaches `handle`.
 */
export function createDispatcher(rt: Runtime): NodeHandler {
  const invoke = createInvokeHandler(rt);
  const paths = healthPaths(rt);
  const operational = new Set([paths.liveness, paths.readiness, rt.options.metricsPath]);
  let app: Express | undefined;
  return function dispatch(req: IncomingMessage, res: ServerResponse) {
    if (operational.has(pathOf(req.url))) {
      app ??= buildApp(rt, invoke);
      app(req, res);
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
