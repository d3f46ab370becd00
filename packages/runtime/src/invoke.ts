/**
 * The one invoke handler: request → body → Context → handle → response. It needs nothing from
 * Express (only node:http's req/res), so the standalone server calls it directly and an Express app
 * can mount it as middleware. An invocation ends in exactly one place, finish(): whichever comes
 * first of the answer, the failure, or the timeout's 504 leaves the in-flight count and records the
 * metrics; anything later (a handle settling after its timeout) finds it finished.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { EMPTY, hasBody, parseBody, readBody } from './body.js';
import { decodeCloudEvents, type DecodedEvents } from './cloudevent-decode.js';
import { encodeBatch, isCloudEvent, isCloudEventRequest } from './cloudevents.js';
import { compatBody, sendCompatError, sendCompatResult } from './compat.js';
import { InvocationContext } from './context.js';
import { Deadlines, type Timed } from './deadlines.js';
import { RuntimeError, sendProblem } from './errors.js';
import { closeAfterResponse } from './lingering-close.js';
import { sendError, sendResult } from './response.js';
import type { Runtime } from './runtime.js';
import type { CloudEventLike } from './types.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

const BATCH_TYPE = 'application/cloudevents-batch+json';

/** `handle`'s `this`: frozen and empty, as faas-js-runtime calls it, so sloppy-mode code never sees globalThis. */
const SCOPE = Object.freeze({});

/** How requests read and answers are written: spec 001 (default), or faas-js-runtime 4 (compat.ts). */
interface Protocol {
  body(raw: Buffer, req: IncomingMessage): unknown;
  eventBody(decoded: DecodedEvents, raw: Buffer, req: IncomingMessage): unknown;
  /** The second argument of `handle` for an event: its data (spec), or the event itself. */
  data(event: CloudEventLike): unknown;
  reply(res: ServerResponse, value: unknown, cors: readonly string[], answeringEvent: boolean): void;
  error(res: ServerResponse, err: unknown, reqId: string): number;
}

const SPEC: Protocol = {
  body: (raw, req) => parseBody(raw, req.headers['content-type']),
  eventBody: (decoded) => decoded.body,
  data: (event) => event.data,
  reply: (res, value, cors) => sendResult(res, value, cors),
  error: sendError,
};

const FAAS_JS_RUNTIME: Protocol = {
  body: compatBody,
  eventBody: (_decoded, raw, req) => compatBody(raw, req),
  data: (event) => event,
  reply: sendCompatResult,
  error: sendCompatError,
};

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

class Invocation implements Timed {
  ctx: InvocationContext | undefined = undefined;
  finished = false;
  deadline = 0;
  prevTimed: Invocation | undefined = undefined;
  nextTimed: Invocation | undefined = undefined;
  /** The arrival, then the call of `handle` once it happens: execution latency runs from there. */
  at: number;
  constructor(readonly req: IncomingMessage, readonly res: ServerResponse, arrived: number) {
    this.at = arrived;
  }
}

export function createInvokeHandler(rt: Runtime): NodeHandler {
  const { fn, options, cors, metrics, inflight, breaker } = rt;
  const handle = fn.handle;
  const protocol = rt.compat ? FAAS_JS_RUNTIME : SPEC;
  const timeout = options.timeout;
  const deadlines = timeout > 0 ? new Deadlines<Invocation>(timeout, onTimeout) : undefined;

  /**
   * Draining (SIGTERM arrived while this invocation ran): its answer closes the connection, as every
   * answer to a request that arrives while draining does (server.ts), so a kept-alive client sends
   * its next request on a new connection instead of on one the drain is about to close.
   */
  function closeIfDraining(res: ServerResponse): void {
    if (rt.state.shuttingDown) res.shouldKeepAlive = false;
  }

  function finish(inv: Invocation, failed: boolean): void {
    if (inv.finished) return;
    inv.finished = true;
    deadlines?.remove(inv);
    breaker?.leave();
    inflight.leave();
    metrics.record((performance.now() - inv.at) / 1000, failed);
  }

  /** Logs a failure by severity and answers it; returns true when it counts as a function error. */
  function fail(inv: Invocation, err: unknown): boolean {
    const { req, res, ctx } = inv;
    const log = ctx?.log ?? rt.logger;
    closeIfDraining(res);
    if (res.headersSent) {
      log.error({ err }, 'function failed after its response was sent');
      return true;
    }
    if (err instanceof RuntimeError && err.code === 'payload_too_large') closeAfterResponse(req, res);
    const status = protocol.error(res, err, ctx?.reqId ?? String((req as { id?: unknown }).id ?? ''));
    if (status >= 500) log.error({ err }, err instanceof RuntimeError ? err.message : 'function failed');
    else log.info({ status, reason: (err as Error)?.message }, 'request rejected');
    return status >= 500;
  }

  function onTimeout(inv: Invocation): void {
    const message = `The function did not answer within ${timeout} ms.`;
    inv.ctx?.abort(new RuntimeError('timeout', message));
    (inv.ctx?.log ?? rt.logger).error(`function timed out after ${timeout} ms`);
    closeIfDraining(inv.res);
    sendProblem(inv.res, 'timeout', message);
    finish(inv, true);
  }

  function reply(inv: Invocation, value: unknown, answeringEvent: boolean): void {
    let failed = false;
    if (!inv.res.headersSent) {
      closeIfDraining(inv.res);
      try {
        protocol.reply(inv.res, value, cors.headers(inv.req), answeringEvent);
      } catch (err) {
        failed = fail(inv, err);
      }
    }
    finish(inv, failed);
  }

  /**
   * Calls `handle` once and answers with what it returns. A handle that answers synchronously
   * allocates no promise at all; an async one costs one `then`. This is the path of nearly every
   * request, plain or event, so it is written out.
   */
  function dispatch(inv: Invocation, ctx: InvocationContext, data: unknown, answeringEvent: boolean, clock?: number): void {
    inv.at = metrics.invoked(inv.at, clock);
    let out: unknown;
    try {
      out = handle.call(SCOPE, ctx, data);
    } catch (err) {
      finish(inv, fail(inv, err));
      return;
    }
    if (!isThenable(out)) {
      reply(inv, out, answeringEvent);
      return;
    }
    waitAtMost(inv, inv.at);
    out.then((value) => reply(inv, value, answeringEvent), (err: unknown) => finish(inv, fail(inv, err)));
  }

  /** A batch: `handle` once per event, in order; the events it returns come back as one batch. */
  async function runBatch(inv: Invocation, ctx: InvocationContext, events: CloudEventLike[]): Promise<void> {
    inv.at = metrics.invoked(inv.at);
    waitAtMost(inv, inv.at);
    const replies: CloudEventLike[] = [];
    for (const event of events) {
      ctx.setEvent(event);
      const out = handle.call(SCOPE, ctx, protocol.data(event));
      const result = isThenable(out) ? await out : out;
      if (isCloudEvent(result)) replies.push(result);
    }
    const { req, res } = inv;
    if (res.headersSent) return;
    if (replies.length === 0) sendResult(res, undefined, cors.headers(req));
    else sendResult(res, { statusCode: 200, headers: { 'content-type': BATCH_TYPE }, body: encodeBatch(replies) }, cors.headers(req));
  }

  /** Events: decoded and checked before `handle` sees them; an invalid one is a 400. */
  function runEvents(inv: Invocation, ctx: InvocationContext, raw: Buffer): void {
    let decoded: DecodedEvents;
    try {
      decoded = decodeCloudEvents(inv.req.headers, raw);
      ctx.body = protocol.eventBody(decoded, raw, inv.req) as InvocationContext['body'];
    } catch (err) {
      finish(inv, fail(inv, err));
      return;
    }
    if (decoded.batch) {
      runBatch(inv, ctx, decoded.events).then(() => finish(inv, false), (err: unknown) => finish(inv, fail(inv, err)));
      return;
    }
    const event = decoded.events[0]!;
    ctx.setEvent(event);
    dispatch(inv, ctx, protocol.data(event), true);
  }

  function run(inv: Invocation, raw: Buffer, clock?: number): void {
    if (inv.finished) return; // timed out while init ran
    const { req, res } = inv;
    const event = isCloudEventRequest(req.headers);
    let body: unknown;
    if (!event) {
      // An Express body parser upstream may have consumed the stream: its result is the body.
      const upstream = (req as { body?: unknown }).body;
      try {
        body = upstream !== undefined ? upstream : protocol.body(raw, req);
      } catch (err) {
        finish(inv, fail(inv, err));
        return;
      }
    }
    const ctx = (inv.ctx = new InvocationContext(req, res, rt, raw, body));
    if (event) runEvents(inv, ctx, raw);
    else dispatch(inv, ctx, ctx.body, false, clock);
  }

  /**
   * The timeout runs from the moment the body is read (a slow upload is not the function's time),
   * but an invocation joins the deadline list only once it has to wait: for `init`, or for the
   * promise `handle` returned. One that answers within the same synchronous stretch could never
   * see its timer fire, so it skips the list. `now` is a clock reading of this same stretch; as
   * every entry is added with the clock of its own moment, the list stays in deadline order.
   */
  function waitAtMost(inv: Invocation, now: number): void {
    if (deadlines !== undefined && inv.deadline === 0) deadlines.add(inv, now);
  }

  /**
   * Requests that arrive while `init` is still running wait for it (their timeout running).
   * `clock`: a reading taken in this same synchronous stretch (a request without a body, read at
   * its arrival), reused for the call of `handle` instead of reading the clock again.
   */
  function runWhenReady(inv: Invocation, raw: Buffer, clock?: number): void {
    if (rt.ready === undefined) {
      run(inv, raw, clock);
      return;
    }
    waitAtMost(inv, clock ?? performance.now());
    rt.ready.then(() => run(inv, raw), (err: unknown) => finish(inv, fail(inv, err)));
  }

  return function invokeHandler(req, res) {
    rt.requestLogger?.(req, res);
    if (cors.isPreflight(req)) {
      cors.preflight(req, res);
      return;
    }
    const arrived = performance.now();
    inflight.enter(arrived);
    if (breaker === undefined) return start(req, res, arrived, arrived);
    // containerConcurrency: run now, or wait for a slot (the wait counts as queue latency), or 503.
    let waiting = false;
    const cancel = breaker.enter(() => {
      if (!waiting) return start(req, res, arrived, arrived);
      res.off('close', gone);
      start(req, res, arrived);
    });
    if (cancel === true) return;
    if (cancel === false) {
      inflight.leave();
      closeIfDraining(res);
      sendProblem(res, 'function_unavailable', `The function is running its limit of ${breaker.capacity} concurrent requests and ${breaker.queueDepth} more are waiting.`);
      return;
    }
    waiting = true;
    // A client that goes away while its request waits takes it out of the queue.
    function gone() {
      (cancel as () => void)();
      inflight.leave();
    }
    res.once('close', gone);
  };

  /** `clock`: `arrived` when the request did not wait for a slot (its reading is still current). */
  function start(req: IncomingMessage, res: ServerResponse, arrived: number, clock?: number): void {
    const inv = new Invocation(req, res, arrived);
    // No body to read: none declared, or one an Express body parser upstream has consumed.
    if (!hasBody(req) || req.readableEnded || (req as { body?: unknown }).body !== undefined) {
      runWhenReady(inv, EMPTY, clock);
      return;
    }
    readBody(req, options.bodyLimit, (err, raw) => {
      if (err === undefined) return runWhenReady(inv, raw);
      fail(inv, err);
      finish(inv, false);
    });
  }
}
