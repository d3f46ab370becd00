/**
 * The types of the function contract (spec 001) and of the runtime's options.
 * Every other module imports its types from here, so this file is the one place to read them.
 */
import type { IncomingMessage } from 'node:http';

/** Log levels, most to least severe, as pino and FUNC_LOG_LEVEL spell them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The logger a function receives: pino's child logger, bound to the request id. */
export interface Logger {
  trace(msg: unknown, ...args: unknown[]): void;
  debug(msg: unknown, ...args: unknown[]): void;
  info(msg: unknown, ...args: unknown[]): void;
  warn(msg: unknown, ...args: unknown[]): void;
  error(msg: unknown, ...args: unknown[]): void;
  fatal(msg: unknown, ...args: unknown[]): void;
}

/** A CloudEvent as the cloudevents SDK models it (any copy of the SDK, or a plain object). */
export interface CloudEventLike {
  specversion: string;
  id: string;
  source: string;
  type: string;
  data?: unknown;
  datacontenttype?: string;
  [attribute: string]: unknown;
}

/** Builds the CloudEvent a function answers with; `response()` returns the event. */
export interface CloudEventResponse {
  id(id: string): CloudEventResponse;
  source(source: string): CloudEventResponse;
  type(type: string): CloudEventResponse;
  version(version: string): CloudEventResponse;
  response(): CloudEventLike;
}

/** The first argument of `handle`: the request, read lazily. */
export interface Context {
  /** pino child logger carrying this request's `reqId`. */
  readonly log: Logger;
  /** The raw node:http request. */
  readonly req: IncomingMessage;
  /** The query string as key → value (a repeated key → array of values). */
  readonly query: Record<string, string | string[]>;
  /** JSON → parsed value, urlencoded → object, text → string, anything else → Buffer; none → undefined. */
  readonly body: unknown;
  /** The request bytes, when the `includeRaw` option is on (webhook signatures). */
  readonly rawBody: Buffer | undefined;
  readonly method: string;
  readonly headers: IncomingMessage['headers'];
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** The request's `content-type` header (faas-js-runtime has this field too). */
  readonly contentType: string | undefined;
  /** URL pathname, e.g. `/orders/7`. */
  readonly path: string;
  /** The request target in origin form, e.g. `/orders/7?x=1`, also when a proxy sent `http://host/orders/7?x=1`. */
  readonly url: string;
  /** The request id: `x-request-id` when sent, else generated. */
  readonly reqId: string;
  /** Aborts when the client goes away, when the request times out, or when the runtime stops. */
  readonly signal: AbortSignal;
  /** The incoming CloudEvent (one event; in batch mode the event being handled). */
  readonly cloudevent: CloudEventLike | undefined;
  cloudEventResponse(data: unknown): CloudEventResponse;
}

/** `handle(context, data)`: data is the CloudEvent's data for an event, else the parsed body. */
export type Handler = (context: Context, data?: unknown) => unknown | Promise<unknown>;

/** A health check; returning normally (or a value) means healthy, throwing means not. */
export type HealthCheck = ((...args: unknown[]) => unknown) & { path?: string };

/** The "Function object" of spec 001 (faas-js-runtime's shape). */
export interface FunctionModule {
  handle: Handler;
  init?: () => void | Promise<void>;
  shutdown?: () => void | Promise<void>;
  liveness?: HealthCheck;
  readiness?: HealthCheck;
  logLevel?: LogLevel;
  /**
   * Keep the request bytes in `context.rawBody` (webhook signatures), like the `includeRaw` option;
   * `--include-raw` / FUNC_INCLUDE_RAW override it.
   */
  includeRaw?: boolean;
  /**
   * Allowed CORS origins (a list, or a comma-separated string), or a CorsConfig; without it every
   * origin is allowed (`*`), as in faas-js-runtime. Called once at start-up.
   */
  cors?: () => string[] | string | CorsConfig;
}

/** What `cors()` may return besides a list of origins. */
export interface CorsConfig {
  /** Allowed origins; `*` or none = any origin. */
  origins?: string[] | string;
  /** Response headers a browser script may read (Access-Control-Expose-Headers), e.g. ['ETag', 'WWW-Authenticate']. */
  exposeHeaders?: string[] | string;
  /** How long a browser may cache a preflight answer, in seconds (default 600). */
  maxAge?: number;
}

/** A return value that sets status, headers and body explicitly. */
export interface StructuredReturn {
  statusCode?: number;
  headers?: Record<string, string | number | readonly string[]>;
  body?: unknown;
}

/** Every runtime option; see config.ts for flags, env names and defaults. */
export interface Options {
  port: number;
  host: string;
  logLevel: LogLevel;
  /** Largest accepted request body in bytes, for every content type. */
  bodyLimit: number;
  includeRaw: boolean;
  /** Per-request timeout in ms (0 = none): aborts `context.signal` and answers 504. */
  timeout: number;
  /** How long in-flight requests may take to finish after SIGTERM, in ms. */
  shutdownTimeout: number;
  livenessPath: string;
  readinessPath: string;
  metricsPath: string;
  /** Event-loop delay in ms above which readiness answers 503 (0 = never). */
  maxEventLoopDelay: number;
  /** Access-Control-Expose-Headers, comma-separated; overrides the cors() member's exposeHeaders. */
  corsExposeHeaders: string;
}

/** The function as the runtime holds it after loading: always an object. */
export interface LoadedFunction extends FunctionModule {
  /** Where it was loaded from, for messages. */
  source?: string;
}

/** The shape the testing helpers accept and `invoke()` answers with. */
export interface TestRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  cloudevent?: Partial<CloudEventLike>;
}

export interface TestResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}
