/**
 * Logging: one pino logger per runtime, one JSON object per line (level, time, pid, hostname,
 * reqId, msg). Request logs come from pino-http, loaded only when the level lets them through, so a
 * function at the default level pays nothing per request for logging it will never print.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { pino, type Logger as PinoLogger } from 'pino';
import type { LogLevel } from './types.js';

const requireLazy = createRequire(import.meta.url);

/** Secrets that must never reach a log line, wherever a request or response is logged. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
];

export type RuntimeLogger = PinoLogger;

export function createLogger(level: LogLevel, destination?: NodeJS.WritableStream): RuntimeLogger {
  const opts = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } };
  // Synchronous writes: a fatal line must be on stdout before the process exits.
  return pino(opts, (destination ?? pino.destination({ dest: 1, sync: true })) as never);
}

/** The request id: the caller's `x-request-id` when it sent one, so traces join up. */
export function requestId(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && sent.length > 0 && sent.length <= 200 ? sent : randomUUID();
}

export type RequestLogger = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * pino-http middleware bound to our logger, or undefined at levels that would print nothing for a
 * successful request (then 5xx are still logged by invoke.ts with the error).
 */
export function createRequestLogger(logger: RuntimeLogger): RequestLogger | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  const pinoHttp = requireLazy('pino-http') as typeof import('pino-http').default;
  const middleware = pinoHttp({
    logger,
    genReqId: (req) => requestId(req),
    quietReqLogger: true,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
  });
  return (req, res) => middleware(req, res);
}
