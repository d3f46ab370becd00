/**
 * Where dev output goes: pino-pretty's human lines by default, the runtime's JSON lines with
 * `--json` (for tools that parse them). Pretty printing runs in-process and synchronously, so a
 * line is on the terminal before the next request, and the order of lines is the order of events.
 */
import { createRequire } from 'node:module';
import { createLogger, type RuntimeLogger } from '../logger.js';

const requireLazy = createRequire(import.meta.url);

export function createDevDestination(json: boolean): NodeJS.WritableStream | undefined {
  if (json) return undefined;
  const pretty = requireLazy('pino-pretty') as typeof import('pino-pretty').build;
  return pretty({
    sync: true,
    colorize: process.stdout.isTTY === true,
    translateTime: 'HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  });
}

/** The dev loop's own messages (URL, reloads, build errors) are always shown, whatever the function's level. */
export function createDevLogger(destination: NodeJS.WritableStream | undefined): RuntimeLogger {
  return createLogger('info', destination).child({ name: 'dev' });
}
