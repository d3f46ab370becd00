/**
 * The one invoke handler: request → Context → handle → response. It needs nothing from Express
 * (only node:http's req/res), so the standalone server calls it directly and an Express app can
 * mount it as middleware. Per request it allocates the Context and, only when used, what it reads.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { EMPTY, hasBody, readBody } from './body.js';
import { decodeCloudEvents, encodeBatch, isCloudEvent, isCloudEventRequest } from './cloudevents.js';
import { InvocationContext } from './context.js';
import { RuntimeError, sendProblem } from './errors.js';
import { sendError, sendResult } from './response.js';
import type { Runtime } from './runtime.js';
import type { CloudEventLike } from './types.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;

const BATCH_TYPE = 'application/cloudevents-batch+json';

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

function onTimeout(ctx: InvocationContext, res: ServerResponse, ms: number): void {
  ctx.abort(new RuntimeError('timeout', `The function did not answer within ${ms} ms.`));
  ctx.log.error(`function timed out after ${ms} ms`);
  sendProblem(res, 'timeout', `The function did not answer within ${ms} ms.`);
}

/** Logs a failure by severity and answers it; returns true when it counts as a function error. */
function fail(rt: Runtime, ctx: InvocationContext | undefined, req: IncomingMessage, res: ServerResponse, err: unknown): boolean {
  if (res.headersSent) return true;
  const reqId = ctx?.reqId ?? String((req as { id?: unknown }).id ?? '');
  if (err instanceof RuntimeError && err.code === 'payload_too_large') res.setHeader('connection', 'close');
  const status = sendError(res, err, reqId);
  const log = ctx?.log ?? rt.logger;
  if (status >= 500) log.error({ err }, 'function failed');
  else log.info({ status, reason: (err as Error)?.message }, 'request rejected');
  return status >= 500;
}

export function createInvokeHandler(rt: Runtime): NodeHandler {
  const { fn, options, cors, metrics, state } = rt;
  const handle = fn.handle;
  // A one-parameter handle never sees `data`, so a JSON body it never reads is never parsed.
  const passData = handle.length !== 1;
  const timeout = options.timeout;

  async function call(ctx: InvocationContext, data: unknown): Promise<unknown> {
    const out = handle(ctx, data);
    return isThenable(out) ? await out : out;
  }

  async function runEvents(ctx: InvocationContext, res: ServerResponse, raw: Buffer): Promise<void> {
    const req = ctx.req;
    const events = decodeCloudEvents(req.headers, raw);
    if (!String(req.headers['content-type']).startsWith(BATCH_TYPE)) {
      ctx.cloudevent = events[0];
      const result = await call(ctx, events[0]!.data);
      if (!res.headersSent) sendResult(res, result, cors.headers(req));
      return;
    }
    const replies: CloudEventLike[] = [];
    for (const event of events) {
      ctx.cloudevent = event;
      const result = await call(ctx, event.data);
      if (isCloudEvent(result)) replies.push(result);
    }
    if (res.headersSent) return;
    if (replies.length === 0) sendResult(res, undefined, cors.headers(req));
    else sendResult(res, { statusCode: 200, headers: { 'content-type': BATCH_TYPE }, body: encodeBatch(replies) }, cors.headers(req));
  }

  /** `invoked`: when `handle` was called (the request's arrival if it never was): execution latency starts there. */
  function done(timer: NodeJS.Timeout | undefined, invoked: number, failed: boolean): void {
    if (timer) clearTimeout(timer);
    state.inflight--;
    metrics.record((performance.now() - invoked) / 1000, failed);
  }

  function reply(ctx: InvocationContext, res: ServerResponse, value: unknown, timer: NodeJS.Timeout | undefined, invoked: number): void {
    let failed = false;
    try {
      if (!res.headersSent) sendResult(res, value, cors.headers(ctx.req));
    } catch (err) {
      failed = fail(rt, ctx, ctx.req, res, err);
    }
    done(timer, invoked, failed);
  }

  /**
   * Events, and requests that arrive while `init` is still running: the general, async path.
   * `clock.at` (the arrival) becomes the moment `handle` is called, once it is.
   */
  async function runAsync(ctx: InvocationContext, res: ServerResponse, raw: Buffer, clock: { at: number }): Promise<void> {
    if (rt.ready) await rt.ready;
    clock.at = metrics.invoked(clock.at);
    if (isCloudEventRequest(ctx.req.headers)) await runEvents(ctx, res, raw);
    else {
      const result = await call(ctx, passData ? ctx.body : undefined);
      if (!res.headersSent) sendResult(res, result, cors.headers(ctx.req));
    }
  }

  /**
   * A plain HTTP request to a handle that answers synchronously allocates no promise at all; an
   * async handle costs one `then`. This is the path of nearly every request, so it is written out.
   */
  function run(req: IncomingMessage, res: ServerResponse, raw: Buffer, started: number): void {
    const ctx = new InvocationContext(req, res, rt, raw);
    const timer = timeout > 0 ? setTimeout(onTimeout, timeout, ctx, res, timeout) : undefined;
    if (rt.ready !== undefined || isCloudEventRequest(req.headers)) {
      const clock = { at: started };
      runAsync(ctx, res, raw, clock).then(() => done(timer, clock.at, false), (err: unknown) => done(timer, clock.at, fail(rt, ctx, req, res, err)));
      return;
    }
    let out: unknown;
    const invoked = metrics.invoked(started);
    try {
      out = handle(ctx, passData ? ctx.body : undefined);
    } catch (err) {
      done(timer, invoked, fail(rt, ctx, req, res, err));
      return;
    }
    if (!isThenable(out)) reply(ctx, res, out, timer, invoked);
    else out.then((value) => reply(ctx, res, value, timer, invoked), (err: unknown) => done(timer, invoked, fail(rt, ctx, req, res, err)));
  }

  return function invokeHandler(req, res) {
    state.inflight++;
    const started = performance.now();
    rt.requestLogger?.(req, res);
    if (cors.isPreflight(req)) {
      cors.preflight(req, res);
      state.inflight--;
      return;
    }
    // An Express body parser upstream may have consumed the stream; context.body then uses req.body.
    const consumed = req.readableEnded || (req as { body?: unknown }).body !== undefined;
    if (consumed || !hasBody(req)) {
      run(req, res, EMPTY, started);
      return;
    }
    readBody(req, options.bodyLimit).then(
      (raw) => run(req, res, raw, started),
      (err: unknown) => {
        fail(rt, undefined, req, res, err);
        state.inflight--;
        metrics.record((performance.now() - started) / 1000, false);
      },
    );
  };
}
