/**
 * Start-up and shutdown. On SIGTERM/SIGINT: readiness → 503, stop accepting, let in-flight requests
 * finish (up to shutdownTimeout), call `shutdown`, flush logs, then report the exit code. Exiting
 * itself is left to cli.ts, the only module allowed to end the process.
 */
import type { Server } from 'node:http';
import type { Runtime } from './runtime.js';

const POLL_MS = 25;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

async function inflightDone(rt: Runtime, deadline: number): Promise<boolean> {
  while (rt.state.inflight > 0) {
    if (Date.now() >= deadline) return false;
    await delay(POLL_MS);
  }
  return true;
}

/** Drains the server and runs `shutdown`; resolves to the exit code (0 unless shutdown failed). */
export async function gracefulStop(server: Server, rt: Runtime, reason: string): Promise<number> {
  rt.state.shuttingDown = true;
  rt.logger.info({ reason, inflight: rt.state.inflight }, 'shutting down');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const drained = await inflightDone(rt, Date.now() + rt.options.shutdownTimeout);
  if (!drained) rt.logger.warn({ inflight: rt.state.inflight }, 'shutdown timeout reached; closing in-flight requests');
  server.closeAllConnections();
  await closed;
  let code = 0;
  try {
    await rt.shutdown();
  } catch (err) {
    rt.logger.error({ err }, 'the function\'s shutdown hook failed');
    code = 1;
  }
  rt.logger.info('stopped');
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
