/**
 * `POST /invocations/{namespace}/{function}`: the broker's HTTP side of an asynchronous invocation,
 * for a gateway in a process of its own (serving/gateway/async.ts; `serve`'s gateway calls the
 * queue directly). The gateway sends the client's request here (its body as the body, its
 * end-to-end headers as they came) with where it was going in `X-Func-Method`, `X-Func-Path` and
 * `X-Func-Host`, and the client's `X-Callback-Url`; the broker's queue (queue.ts) stores it durably
 * and answers 202 with its id (`X-Call-Id` and `{"id": …}`) only after the append, then runs it
 * (invoker.ts).
 *
 * | answer | when                                                                              |
 * | ------ | --------------------------------------------------------------------------------- |
 * | 202    | stored                                                                            |
 * | 400    | `X-Func-Method`/`-Path`/`-Host` missing or malformed, `X-Callback-Url` not an absolute http(s) URL |
 * | 404    | another path                                                                      |
 * | 405    | a method other than POST                                                          |
 * | 413    | body over `maxEventBytes`                                                         |
 * | 429    | too many invocations waiting to be stored (`Retry-After`)                         |
 * | 503    | the log cannot store now, or invocations are not served (`Retry-After`)           |
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { problem } from '../ingress.js';
import { answerQueued, type InvocationQueue } from './queue.js';

export const INVOCATIONS_PATH = '/invocations/';

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const one = (h: IncomingHttpHeaders, name: string): string => {
  const v = h[name];
  return typeof v === 'string' ? v : '';
};

export function invocationIngress(queue: InvocationQueue): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const parts = (req.url ?? '').split('?')[0]!.slice(INVOCATIONS_PATH.length).split('/');
    const [namespace, name] = parts;
    if (parts.length !== 2 || !namespace || !name || !NAME.test(namespace) || !NAME.test(name))
      return problem(res, 404, 'no such endpoint: POST invocations to /invocations/{namespace}/{function}');
    if (req.method !== 'POST') return problem(res, 405, 'only POST is supported', { allow: 'POST' });
    const callback = req.headers['x-callback-url'];
    const call = {
      namespace,
      name,
      method: one(req.headers, 'x-func-method'),
      path: one(req.headers, 'x-func-path'),
      host: one(req.headers, 'x-func-host'),
      headers: req.headers,
      ...(callback ? { callback: String(callback) } : {}),
    };
    answerQueued(req, res, await queue.queue(call, req));
  };
}
