/**
 * The public type names faas-js-runtime 4 exports, with its shapes, for code written against it:
 * `import { Context, HTTPFunction, CloudEventFunction, StructuredReturn } from 'faas-js-runtime'`
 * type-checks the same after the package is swapped for this one. They describe its contract: a
 * CloudEventFunction's second argument is the whole event, as in compatibility mode.
 */
import type { CloudEvent } from 'cloudevents';
import type { Context, FunctionModule, LogLevel, StartOptions, StructuredReturn } from './types.js';

/** Any request body a function may receive. */
export type IncomingBody = string | object | Buffer;

/** Any response body a function may return. */
export type ResponseBody = string | object | Buffer;

export type HTTPFunctionReturn = Promise<StructuredReturn> | StructuredReturn | ResponseBody | void;

/** A function that handles plain HTTP requests. */
export interface HTTPFunction {
  (context: Context, body?: IncomingBody): HTTPFunctionReturn;
}

export type CloudEventFunctionReturn<T = unknown> = Promise<CloudEvent<T>> | CloudEvent<T> | HTTPFunctionReturn;

/** A function that receives CloudEvents: the event itself is the second argument (compatibility mode). */
export interface CloudEventFunction<I = never, R = unknown> {
  (context: Context, event?: CloudEvent<I>): CloudEventFunctionReturn<R>;
}

export type FunctionReturn = CloudEventFunctionReturn | HTTPFunctionReturn;

/** What start() accepts as the function: a handler of either kind (or a Function object). */
export type Invokable = CloudEventFunction | HTTPFunction;

/** start()'s options, under faas-js-runtime's name. */
export type InvokerOptions = StartOptions;

export interface Config {
  logLevel: LogLevel;
  port: number;
  includeRaw: boolean;
}

export type { FunctionModule as Function };
