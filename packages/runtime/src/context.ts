/**
 * The Context a function receives. The request's data fields are the instance's own properties,
 * set once in the constructor from values already at hand (the request's own headers object, the
 * body read before `handle` runs), so `{ ...context }` and `JSON.stringify(context)` work as they
 * did on faas-js-runtime. What costs something is made on first read instead: the request id, the
 * AbortSignal and the child logger (RequestLog). `req` is read through a getter, so a copy or a
 * JSON dump of the context never reaches the socket.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import type { CloudEvent } from 'cloudevents';
import { newCloudEvent } from './cloudevents.js';
import { requestId, type RuntimeLogger } from './logger.js';
import { originForm } from './request-target.js';
import { RequestLog } from './request-log.js';
import type { CloudEventLike, CloudEventResponse, Context } from './types.js';

/** What a context needs from the runtime that serves it. */
export interface ContextRuntime {
  readonly logger: RuntimeLogger;
  readonly includeRaw: boolean;
  readonly compat: boolean;
}

export class CloudEventResponseBuilder implements CloudEventResponse {
  readonly #attributes: Record<string, unknown>;
  constructor(data: unknown) {
    this.#attributes = { data };
  }
  id(id: string): this {
    this.#attributes.id = id;
    return this;
  }
  source(source: string): this {
    this.#attributes.source = source;
    return this;
  }
  type(type: string): this {
    this.#attributes.type = type;
    return this;
  }
  version(version: string): this {
    this.#attributes.specversion = version;
    return this;
  }
  response<T = unknown>(): CloudEvent<T> {
    return newCloudEvent(this.#attributes) as unknown as CloudEvent<T>;
  }
}

/** The query of a target whose `?` is at `q` (-1: none), as a plain object of its own. */
function queryOf(url: string, q: number): Record<string, string | string[]> {
  return q === -1 ? {} : { ...parseQueryString(url.slice(q + 1)) } as Record<string, string | string[]>;
}

/** The request bytes as the function sees them: faas-js-runtime gave a string, and nothing without a declared body. */
function rawBodyOf(rt: ContextRuntime, req: IncomingMessage, raw: Buffer): Buffer | string | undefined {
  if (!rt.includeRaw) return undefined;
  if (!rt.compat) return raw;
  const declared = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
  return declared ? raw.toString('utf8') : undefined;
}

/**
 * faas-js-runtime also copied each query parameter onto the context (before `log`, which wins).
 * `__proto__` is skipped: assigned, an array value would replace the context's prototype.
 */
function copyQuery(target: object, query: Record<string, unknown>): void {
  for (const key of Object.keys(query)) if (key !== '__proto__') (target as Record<string, unknown>)[key] = query[key];
}

export class InvocationContext implements Context {
  // Declaration order is the order `{ ...context }` lists them: faas-js-runtime's order, then ours.
  body: Context['body'];
  query: Record<string, any>;
  headers: IncomingMessage['headers'];
  method: string;
  httpVersion: string;
  httpVersionMajor: number;
  httpVersionMinor: number;
  contentType: string | undefined;
  rawBody: Buffer | string | undefined;
  log: RequestLog;
  path: string;
  url: string;
  cloudevent: CloudEvent<unknown>;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse | undefined;
  #reqId: string | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #abortReason: unknown = undefined;

  constructor(req: IncomingMessage, res: ServerResponse | undefined, rt: ContextRuntime, raw: Buffer, body: unknown) {
    const url = originForm(req.url);
    const q = url.indexOf('?');
    this.body = body as Context['body'];
    this.query = queryOf(url, q);
    this.headers = req.headers;
    this.method = req.method ?? 'GET';
    this.httpVersion = req.httpVersion;
    this.httpVersionMajor = req.httpVersionMajor;
    this.httpVersionMinor = req.httpVersionMinor;
    this.contentType = req.headers['content-type'];
    this.rawBody = rawBodyOf(rt, req, raw);
    if (rt.compat) copyQuery(this, this.query);
    this.log = new RequestLog(rt.logger, this);
    this.path = q === -1 ? url : url.slice(0, q);
    this.url = url;
    this.cloudevent = undefined as unknown as CloudEvent<unknown>;
    this.#req = req;
    this.#res = res;
  }

  get req(): IncomingMessage {
    return this.#req;
  }

  get reqId(): string {
    return (this.#reqId ??= (this.#req as { id?: string }).id ?? requestId(this.#req));
  }

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      const res = this.#res;
      if (this.#abortReason !== undefined) controller.abort(this.#abortReason);
      else if (res) {
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new Error('The client closed the connection before the response was sent.'));
        });
      }
    }
    return this.#controller.signal;
  }

  /** Aborts the signal now, or marks it so it is born aborted if the function reads it later. */
  abort(reason: unknown): void {
    this.#abortReason = reason;
    this.#controller?.abort(reason);
  }

  /** The event being handled (one request may carry a batch). */
  setEvent(event: CloudEventLike): void {
    this.cloudevent = event as unknown as CloudEvent<unknown>;
  }

  cloudEventResponse(data: unknown): CloudEventResponse {
    return new CloudEventResponseBuilder(data);
  }
}
