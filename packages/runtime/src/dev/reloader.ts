/**
 * Hot swap behind one listening socket. The server's request listener never changes; it reads the
 * current generation (a Runtime and its dispatcher) per request, so a request keeps the generation
 * it started on and finishes on the old code while the next one sees the new code. Order of hooks,
 * the same as a rolling update: init(new) → swap → old in-flight requests finish → shutdown(old).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { healthPaths, monitorEventLoop } from '../health.js';
import type { NodeHandler } from '../invoke.js';
import { gracefulStop } from '../lifecycle.js';
import { pathOf } from '../request-target.js';
import type { Runtime } from '../runtime.js';
import { createDispatcher } from '../server.js';
import type { LoadedFunction } from '../types.js';

interface Generation {
  rt: Runtime;
  dispatch: NodeHandler;
  readinessPath: string;
  stopMonitor: () => void;
}


export class Reloader {
  #current: Generation | undefined;
  #retiring = new Set<Promise<void>>();
  /** Why the code served is not the code on disk (a failed rebuild); undefined when current. */
  stale: string | undefined;

  /** `makeRuntime` builds the per-generation state (options, logger, metrics) for a loaded module. */
  constructor(private readonly makeRuntime: (fn: LoadedFunction) => Runtime | Promise<Runtime>) {}

  get runtime(): Runtime | undefined {
    return this.#current?.rt;
  }

  /** The server's one request listener. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => {
    const gen = this.#current;
    if (!gen) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('Starting');
      return;
    }
    // Readiness tells tooling (and the developer) that the code on disk is not what is serving.
    if (this.stale !== undefined && req.method === 'GET' && pathOf(req.url) === gen.readinessPath) {
      const text = `Stale: ${this.stale}`;
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
      res.end(text);
      return;
    }
    gen.dispatch(req, res);
  };

  /** Runs the new module's init, then routes new requests to it and retires the old one. Throws if init fails. */
  async swap(fn: LoadedFunction): Promise<void> {
    const rt = await this.makeRuntime(fn);
    await fn.init?.();
    const next: Generation = { rt, dispatch: createDispatcher(rt), readinessPath: healthPaths(rt).readiness, stopMonitor: monitorEventLoop(rt) };
    const old = this.#current;
    this.#current = next;
    if (old) this.#retire(old);
    else rt.metrics.ready();
  }

  #retire(old: Generation): void {
    old.stopMonitor();
    const done = old.rt.inflight.drained(old.rt.options.shutdownTimeout)
      .then(() => old.rt.shutdown())
      .catch((err: unknown) => old.rt.logger.error({ err }, 'the previous version\'s shutdown hook failed'))
      .finally(() => this.#retiring.delete(done));
    this.#retiring.add(done);
  }

  /** Graceful stop of the whole server; resolves to the exit code. */
  async stop(server: Server, reason: string): Promise<number> {
    const gen = this.#current;
    if (!gen) {
      await new Promise((resolve) => server.close(resolve));
      return 0;
    }
    gen.stopMonitor();
    const code = await gracefulStop(server, gen.rt, reason);
    await Promise.all(this.#retiring);
    return code;
  }
}
