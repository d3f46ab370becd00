/**
 * The Context a function receives. Built once per request from a class whose getters compute on
 * first read (query, body, logger, signal, request id), so a function pays only for what it uses:
 * no copies of headers or query, no bound methods, no child logger unless it logs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { parseBody } from './body.js';
import { newCloudEvent } from './cloudevents.js';
import { requestId } from './logger.js';
import { originForm } from './request-target.js';
import type { RuntimeLogger } from './logger.js';
import type { CloudEventLike, CloudEventResponse, Context, Logger } from './types.js';

const UNSET: unique symbol = Symbol('unset');

/** What a context needs from the runtime that serves it. */
export interface ContextRuntime {
  readonly logger: RuntimeLogger;
  readonly includeRaw: boolean;
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
  response(): CloudEventLike {
    return newCloudEvent(this.#attributes);
  }
}

export class InvocationContext implements Context {
  readonly req: IncomingMessage;
  cloudevent: CloudEventLike | undefined = undefined;
  readonly #res: ServerResponse | undefined;
  readonly #rt: ContextRuntime;
  readonly #raw: Buffer;
  #body: unknown = UNSET;
  #query: Record<string, string | string[]> | undefined = undefined;
  #log: Logger | undefined = undefined;
  #reqId: string | undefined = undefined;
  #controller: AbortController | undefined = undefined;
  #abortReason: unknown = undefined;

  constructor(req: IncomingMessage, res: ServerResponse | undefined, rt: ContextRuntime, raw: Buffer) {
    this.req = req;
    this.#res = res;
    this.#rt = rt;
    this.#raw = raw;
  }

  get method(): string { return this.req.method ?? 'GET'; }
  get headers(): IncomingMessage['headers'] { return this.req.headers; }
  get httpVersion(): string { return this.req.httpVersion; }
  get httpVersionMajor(): number { return this.req.httpVersionMajor; }
  get httpVersionMinor(): number { return this.req.httpVersionMinor; }
  get contentType(): string | undefined { return this.req.headers['content-type']; }
  get url(): string { return originForm(this.req.url); }

  get path(): string {
    const url = this.url;
    const q = url.indexOf('?');
    return q === -1 ? url : url.slice(0, q);
  }

  get query(): Record<string, string | string[]> {
    if (this.#query === undefined) {
      const url = this.url;
      const q = url.indexOf('?');
      this.#query = q === -1 ? {} : { ...parseQueryString(url.slice(q + 1)) } as Record<string, string | string[]>;
    }
    return this.#query;
  }

  /** Parsed on first read; a malformed body throws a RuntimeError the runtime answers with a 400. */
  get body(): unknown {
    if (this.#body === UNSET) {
      // An Express body parser upstream has consumed the stream already: use its result.
      const upstream = (this.req as { body?: unknown }).body;
      this.#body = upstream !== undefined ? upstream : parseBody(this.#raw, this.req.headers['content-type']);
    }
    return this.#body;
  }
  set body(value: unknown) {
    this.#body = value;
  }

  get rawBody(): Buffer | undefined {
    return this.#rt.includeRaw ? this.#raw : undefined;
  }

  get reqId(): string {
    return (this.#reqId ??= (this.req as { id?: string }).id ?? requestId(this.req));
  }

  get log(): Logger {
    return (this.#log ??= (this.req as { log?: Logger }).log ?? this.#rt.logger.child({ reqId: this.reqId }));
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

  cloudEventResponse(data: unknown): CloudEventResponse {
    return new CloudEventResponseBuilder(data);
  }
}
