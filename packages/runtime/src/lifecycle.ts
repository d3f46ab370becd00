/**
 * Shutdown. On SIGTERM/SIGINT: readiness → 503; for `drainDelay` the listener stays open and serves,
 * so a platform that probes readiness on new connections sees the replica go unready before it stops
 * accepting, and every answer carries `Connection: close` (server.ts for requests that arrive while
 * draining, invoke.ts for those in flight at the signal), so kept-alive clients move to
 * a new connection, and so to a ready replica; then the listener closes, in-flight invocations finish (up to `shutdownTimeout`, then
 * they are cut), `shutdown` runs, logs are flushed, and the exit code is reported: 0, or 1 when the
 * drain was cut short or `shutdown` threw. Exiting itself is left to cli.ts, the only module allowed
 * to end the process.
 */
import type { Server } from 'node:http';
import type { Runtime } from './runtime.js';

/** A ref'd wait: the process stays up for it even when nothing else is pending. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Drains the server and runs `shutdown`; resolves to the exit code. */
export async function gracefulStop(server: Server, rt: Runtime, reason: string): Promise<number> {
  rt.state.shuttingDown = true;
  rt.logger.info({ reason, inflight: rt.inflight.count, drainDelay: rt.options.drainDelay }, 'shutting down');
  if (rt.options.drainDelay > 0) await delay(rt.options.drainDelay);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const drained = await rt.inflight.drained(rt.options.shutdownTimeout);
  if (!drained) rt.logger.warn({ inflight: rt.inflight.count }, 'shutdown timeout reached; closing in-flight requests');
  server.closeAllConnections();
  await closed;
  let code = drained ? 0 : 1;
  try {
    await rt.shutdown();
  } catch (err) {
    rt.logger.error({ err }, 'the function\'s shutdown hook failed');
    code = 1;
  }
  rt.logger.info({ code }, 'stopped');
  rt.logger.flush();
  return code;
}

export type Exit = (code: number) => void;

/**
 * SIGTERM / SIGINT start a graceful stop; a second signal means "now". An exception or rejection
 * that escaped the function is fatal: its state is unknown, so the platform must restart us.
 */
export function installProcessHandlers(server: Server, rt: Runtime, exit: Exit): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      rt.logger.warn({ signal }, 'second signal: exiting now');
      rt.logger.flush();
      exit(1);
      return;
    }
    stopping = true;
    gracefulStop(server, rt, signal).then(exit, () => exit(1));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const onCrash = (kind: string) => (err: unknown) => {
    rt.logger.fatal({ err }, `${kind} escaped the function; exiting so the platform restarts it`);
    rt.logger.flush();
    exit(1);
  };
  process.on('uncaughtException', onCrash('uncaught exception'));
  process.on('unhandledRejection', onCrash('unhandled promise rejection'));
}
