/**
 * The types of the function contract (spec 001) and of the runtime's options. Every other module
 * imports its types from here, so this file is the one place to read them. The names and shapes
 * faas-js-runtime 4 exports (lib/types.d.ts, index.d.ts) are here too, so a TypeScript project
 * written for it type-checks unchanged; where its types are looser than ours would be (query
 * values, the body), they keep its looser shape, because code written against them must compile.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CloudEvent } from 'cloudevents';

/** Log levels, most to least severe, as pino and FUNC_LOG_LEVEL spell them. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** faas-js-runtime declares LogLevel as an enum: `LogLevel.info` names the level here as well. */
export const LogLevel = Object.freeze(Object.fromEntries(LOG_LEVELS.map((l) => [l, l]))) as { readonly [L in LogLevel]: L };

/** `FUNC_COMPAT`: `faas-js-runtime` makes a function written for faas-js-runtime 4 behave as it did there. */
export const COMPAT_MODES = ['none', 'faas-js-runtime'] as const;
export type CompatMode = (typeof COMPAT_MODES)[number];

/** The logger a function receives: pino's child logger bound to the request id (created on first use). */
export interface Logger {
  trace(msg: unknown, ...args: unknown[]): void;
  debug(msg: unknown, ...args: unknown[]): void;
  info(msg: unknown, ...args: unknown[]): void;
  warn(msg: unknown, ...args: unknown[]): void;
  error(msg: unknown, ...args: unknown[]): void;
  fatal(msg: unknown, ...args: unknown[]): void;
  /** The level in force, e.g. `warn`. */
  level: string;
  isLevelEnabled(level: string): boolean;
  child(bindings: Record<string, unknown>): Logger;
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

/**
 * Builds the CloudEvent a function answers with; `response()` returns the event, typed by its use
 * (`const e: CloudEvent<Greeting> = ….response()`), as faas-js-runtime's untyped `CloudEvent` is.
 */
export interface CloudEventResponse {
  id(id: string): CloudEventResponse;
  source(source: string): CloudEventResponse;
  type(type: string): CloudEventResponse;
  version(version: string): CloudEventResponse;
  response<T = unknown>(): CloudEvent<T>;
}

/**
 * The first argument of `handle`. The request's data fields are the context's own properties, so
 * `{ ...context }` and `JSON.stringify(context)` copy them; `req`, `reqId` and `signal` are read
 * through it (not copied: the socket is circular, the id and the signal are made on first read).
 */
export interface Context {
  /** pino child logger carrying this request's `reqId`, created on the first log call. */
  log: Logger;
  /** The raw node:http request. */
  readonly req: IncomingMessage;
  /** The query string as key → value (a repeated key → array of values). */
  query: Record<string, any>;
  /** JSON → parsed value, urlencoded → object, text → string, anything else → Buffer; none → undefined. */
  body?: Record<string, any> | string;
  /** The request bytes when `includeRaw` is on (webhook signatures): a Buffer, or a string in faas-js-runtime compatibility mode. */
  rawBody?: Buffer | string;
  method: string;
  headers: IncomingHttpHeaders;
  httpVersion: string;
  httpVersionMajor: number;
  httpVersionMinor: number;
  /** The request's `content-type` header. */
  contentType?: string;
  /** URL pathname, e.g. `/orders/7`. */
  path: string;
  /** The request target in origin form, e.g. `/orders/7?x=1`, also when a proxy sent `http://host/orders/7?x=1`. */
  url: string;
  /** The request id: `x-request-id` when sent, else generated on first read. */
  readonly reqId: string;
  /** Aborts when the client goes away, when the request times out, or when the runtime stops. */
  readonly signal: AbortSignal;
  /**
   * The incoming CloudEvent (in batch mode the event being handled); undefined when the request is
   * plain HTTP. Typed as faas-js-runtime types it, so code written for it compiles: check it first.
   */
  cloudevent: CloudEvent<unknown>;
  cloudEventResponse(data: unknown): CloudEventResponse;
}

/** `handle(context, data)`: data is the CloudEvent's data for an event, else the parsed body. */
// `any`: every typed handle signature (HTTPFunction, CloudEventFunction<T>, `(c, body: string)`) is assignable.
export type Handler = (context: Context, data?: any) => unknown;

/** A health check: called as a route handler; returning normally (or a value) means healthy, throwing means not. */
export interface HealthCheck {
  (request: IncomingMessage, reply: ServerResponse): unknown;
  path?: string;
}

/** The "Function object" of spec 001 (faas-js-runtime's `Function`). */
export interface FunctionModule {
  handle: Handler;
  init?: () => unknown;
  shutdown?: () => unknown;
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
  /** After SIGTERM, how long readiness answers 503 while the listener stays open, in ms. */
  drainDelay: number;
  livenessPath: string;
  readinessPath: string;
  metricsPath: string;
  /** Event-loop delay in ms above which readiness answers 503 (0 = never). */
  maxEventLoopDelay: number;
  /** Invocations running at once (Knative's containerConcurrency; 0 = no limit): the next ones queue, 10 per slot, then 503. */
  containerConcurrency: number;
  /** Access-Control-Expose-Headers, comma-separated; overrides the cors() member's exposeHeaders. */
  corsExposeHeaders: string;
  /** `faas-js-runtime`: behave as faas-js-runtime 4 where the spec differs from it. */
  compat: CompatMode;
}

/** start()'s options: runtime options, where func.yaml is, and the Function members faas-js-runtime also takes here. */
export interface StartOptions extends Partial<Options>, Pick<FunctionModule, 'cors' | 'liveness' | 'readiness' | 'shutdown'> {
  /**
   * The project directory. Its func.yaml, when there is one, is validated against func.schema.json
   * (an invalid one rejects with a FuncYamlError naming the file and field) and applied as the CLI
   * applies it: deploy.healthEndpoints, and run.envs as defaults of process.env.
   */
  dir?: string;
  /** faas-js-runtime's name for `dir` (a directory, or the func.yaml file itself). */
  config?: string;
  /** faas-js-runtime's InvokerOptions name for the project's path; the same as `dir`. */
  path?: string;
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
