/**
 * Liveness and readiness probes. Readiness turns 503 while shutting down (so the platform stops
 * routing here before connections close) and while the event loop lags past the limit (so an
 * overloaded replica sheds traffic instead of timing out). A user check replaces the default OK.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { errorStatus, sendResult } from './response.js';
import type { Runtime } from './runtime.js';
import type { HealthCheck } from './types.js';

const TEXT = ['content-type', 'text/plain; charset=utf-8', 'cache-control', 'no-store'];
const NO_CORS: readonly string[] = [];

function plain(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, TEXT.concat('content-length', String(Buffer.byteLength(text))));
  res.end(text);
}

async function runCheck(check: HealthCheck | undefined, req: IncomingMessage, res: ServerResponse, rt: Runtime): Promise<void> {
  if (!check) return plain(res, 200, 'OK');
  try {
    // faas-js-runtime calls checks as route handlers (request, reply); passing them keeps old checks working.
    let out = check(req, res);
    if (out && typeof (out as Promise<unknown>).then === 'function') out = await out;
    if (res.headersSent) return;
    if (out === undefined || out === null || out === '') plain(res, 200, 'OK');
    else sendResult(res, out, NO_CORS);
  } catch (err) {
    rt.logger.warn({ err }, 'health check failed');
    if (!res.headersSent) plain(res, errorStatus(err) ?? 503, 'Unavailable');
  }
}

export function livenessHandler(rt: Runtime) {
  return (req: IncomingMessage, res: ServerResponse): Promise<void> => runCheck(rt.fn.liveness, req, res, rt);
}

export function readinessHandler(rt: Runtime) {
  const max = rt.options.maxEventLoopDelay;
  return (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (rt.state.shuttingDown) return Promise.resolve(plain(res, 503, 'Shutting down'));
    if (max > 0 && rt.state.loopDelay > max) return Promise.resolve(plain(res, 503, 'Overloaded'));
    return runCheck(rt.fn.readiness, req, res, rt);
  };
}

/**
 * Samples event-loop delay with one unref'd timer: the time a tick fires late is how long a
 * request would have waited. The smaller of the last two samples counts, so one long pause (a
 * lazy module load, a GC) does not take the replica out of rotation; sustained lag does.
 */
export function monitorEventLoop(rt: Runtime, intervalMs = 200): () => void {
  let expected = performance.now() + intervalMs;
  let previous = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const sample = Math.max(0, now - expected);
    rt.state.loopDelay = Math.min(previous, sample);
    previous = sample;
    expected = now + intervalMs;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Health paths: the function's `path` property wins over the configured (env / func.yaml) one. */
export function healthPaths(rt: Runtime): { liveness: string; readiness: string } {
  return {
    liveness: rt.fn.liveness?.path ?? rt.options.livenessPath,
    readiness: rt.fn.readiness?.path ?? rt.options.readinessPath,
  };
}
