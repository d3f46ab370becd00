/**
 * Where dev output goes: pino-pretty's human lines by default, the runtime's JSON lines with
 * `--json` (for tools that parse them). Pretty printing runs in-process and synchronously, so a
 * line is on the terminal before the next request, and the order of lines is the order of events.
 */
import { createRequire } from 'node:module';
import { createLogger, type RuntimeLogger } from '../logger.js';

const requireLazy = createRequire(import.meta.url);

export interface DevOutput {
  /** For the function's runtimes: request logs and `context.log`. Undefined = JSON on stdout. */
  destination: NodeJS.WritableStream | undefined;
  /** The dev loop's own messages (URL, reloads, build errors), shown whatever the function's level. */
  logger: RuntimeLogger;
}

interface RequestLine {
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/** A request log reads as `GET /path → 200 (3 ms)`; any other line is its message. */
function messageFormat(log: Record<string, unknown>, messageKey: string): string {
  const { req, res, responseTime } = log as RequestLine;
  if (req?.method && res?.statusCode !== undefined) return `${req.method} ${req.url ?? ''} → ${res.statusCode} (${responseTime ?? '?'} ms)`;
  return String(log[messageKey] ?? '');
}

export function createDevOutput(json: boolean): DevOutput {
  if (json) return { destination: undefined, logger: createLogger('info').child({ name: 'dev' }) };
  const pretty = requireLazy('pino-pretty') as typeof import('pino-pretty').build;
  const common = { sync: true, colorize: process.stdout.isTTY === true, translateTime: 'HH:MM:ss.l', singleLine: true };
  const destination = pretty({ ...common, ignore: 'pid,hostname,reqId,req,res,responseTime', messageFormat });
  // The dev loop's fields (file, line, ms, …) repeat what its message says; JSON mode keeps them for tools.
  const own = pretty({ ...common, ignore: 'pid,hostname,url,entry,ms,changed,file,line,column' });
  return { destination, logger: createLogger('info', own).child({ name: 'dev' }) };
}
