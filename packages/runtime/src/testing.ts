/**
 * Helpers for a function's unit tests: a real Context without a server, and invoke(), which runs
 * the runtime's own request pipeline (body parsing, CloudEvents, return mapping, errors) against an
 * in-memory request and response, so a test sees exactly what a client would.
 */
import { randomUUID } from 'node:crypto';
import { IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Socket } from 'node:net';
import { parseBody } from './body.js';
import { newCloudEvent } from './cloudevents.js';
import { InvocationContext } from './context.js';
import { createInvokeHandler } from './invoke.js';
import { start } from './index.js';
import { createRuntime } from './runtime.js';
import type { Context, FunctionModule, Handler, LogLevel, Options, TestRequest, TestResponse } from './types.js';

export type { TestRequest, TestResponse } from './types.js';

export interface TestOptions {
  /** Log level of the context's logger; silent unless given. */
  logLevel?: LogLevel;
  includeRaw?: boolean;
  bodyLimit?: number;
}

function cloudEventHeaders(ce: NonNullable<TestRequest['cloudevent']>): Record<string, string> {
  const headers: Record<string, string> = {
    'ce-specversion': ce.specversion ?? '1.0',
    'ce-id': ce.id ?? randomUUID(),
    'ce-source': ce.source ?? '/test',
    'ce-type': ce.type ?? 'test.event',
  };
  for (const [k, v] of Object.entries(ce)) {
    if (!['specversion', 'id', 'source', 'type', 'data', 'datacontenttype'].includes(k) && v !== undefined) headers[`ce-${k}`] = String(v);
  }
  return headers;
}

function encode(init: TestRequest): { headers: Record<string, string>; body: Buffer } {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(init.headers ?? {})) headers[k.toLowerCase()] = v;
  const payload = init.cloudevent ? init.cloudevent.data ?? init.body : init.body;
  if (init.cloudevent) Object.assign(headers, cloudEventHeaders(init.cloudevent));
  let body = Buffer.alloc(0);
  if (payload !== undefined) {
    const bytes = Buffer.isBuffer(payload) || payload instanceof Uint8Array;
    body = bytes ? Buffer.from(payload) : Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
    headers['content-type'] ??= init.cloudevent?.datacontenttype ?? (bytes ? 'application/octet-stream' : typeof payload === 'string' ? 'text/plain' : 'application/json');
    headers['content-length'] = String(body.length);
  }
  return { headers, body };
}

function fakeRequest(init: TestRequest): { req: IncomingMessage; body: Buffer } {
  const { headers, body } = encode(init);
  const req = new IncomingMessage(new Socket());
  const qs = init.query ? new URLSearchParams(init.query).toString() : '';
  req.method = (init.method ?? (body.length > 0 ? 'POST' : 'GET')).toUpperCase();
  req.url = `${init.path ?? '/'}${qs ? `?${qs}` : ''}`;
  req.headers = headers;
  req.httpVersion = '1.1';
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  if (body.length > 0) req.push(body);
  req.push(null);
  return { req, body };
}

/** A Context for calling `handle` directly in a unit test. */
export function createTestContext(init: TestRequest = {}, options: TestOptions = {}): Context {
  const { req, body } = fakeRequest(init);
  const rt = createRuntime(() => undefined, { options: { logLevel: options.logLevel ?? 'silent', includeRaw: options.includeRaw ?? true }, env: {} });
  const ctx = new InvocationContext(req, undefined, rt, body, parseBody(body, req.headers['content-type']));
  if (init.cloudevent) {
    const data = init.cloudevent.data ?? init.body;
    ctx.setEvent(newCloudEvent({ ...init.cloudevent, id: init.cloudevent.id ?? randomUUID(), source: init.cloudevent.source ?? '/test', type: init.cloudevent.type ?? 'test.event', data }));
  }
  return ctx;
}

/** Collects what the pipeline writes; implements the part of ServerResponse the runtime uses. */
class CapturedResponse {
  statusCode = 200;
  headersSent = false;
  writableFinished = false;
  readonly headers: Record<string, string> = {};
  readonly done: Promise<{ status: number; headers: Record<string, string>; body: Buffer }>;
  #resolve!: (v: { status: number; headers: Record<string, string>; body: Buffer }) => void;
  constructor() {
    this.done = new Promise((resolve) => (this.#resolve = resolve));
  }
  setHeader(name: string, value: unknown): this {
    this.headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    return this;
  }
  writeHead(status: number, headers?: readonly string[] | Record<string, unknown>): this {
    this.statusCode = status;
    if (Array.isArray(headers)) for (let i = 0; i < headers.length; i += 2) this.setHeader(headers[i], headers[i + 1]);
    else if (headers) for (const [k, v] of Object.entries(headers)) this.setHeader(k, v);
    this.headersSent = true;
    return this;
  }
  end(body?: string | Uint8Array): this {
    this.headersSent = true;
    this.writableFinished = true;
    this.#resolve({ status: this.statusCode, headers: this.headers, body: body === undefined ? Buffer.alloc(0) : Buffer.from(body) });
    return this;
  }
  once(): this { return this; }
  destroy(): this { return this.end(); }
}

/** Runs `fn` through the runtime's request pipeline without a server. */
export async function invoke(fn: Handler | FunctionModule, init: TestRequest = {}, options: TestOptions = {}): Promise<TestResponse> {
  const rt = createRuntime(fn, { options: { logLevel: options.logLevel ?? 'silent', includeRaw: options.includeRaw, bodyLimit: options.bodyLimit }, env: {} });
  const { req } = fakeRequest(init);
  const res = new CapturedResponse();
  createInvokeHandler(rt)(req, res as unknown as ServerResponse);
  const out = await res.done;
  let body: unknown;
  try {
    body = parseBody(out.body, out.headers['content-type']);
  } catch {
    body = out.body.toString('utf8');
  }
  return { statusCode: out.status, headers: out.headers, body };
}

export interface TestServer {
  server: Server;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  /** Closes every connection and the server (running `shutdown`). */
  close(): Promise<void>;
}

/** Serves `fn` on 127.0.0.1 and a free port, silent unless a log level is given: for integration tests. */
export async function createTestServer(fn: Handler | FunctionModule, options: Partial<Options> = {}): Promise<TestServer> {
  const server = await start(fn, { port: 0, host: '127.0.0.1', logLevel: 'silent', ...options });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
