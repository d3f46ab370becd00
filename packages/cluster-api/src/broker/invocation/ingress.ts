/**
 * `POST /invocations/{namespace}/{function}`: the broker's side of an asynchronous invocation. The
 * gateway sends the client's request here (its body as the body, its end-to-end headers as they
 * came) with where it was going in `X-Func-Method`, `X-Func-Path` and `X-Func-Host`, and the
 * client's `X-Callback-Url`; the broker stores it durably and answers 202 with its id (`X-Call-Id`
 * and `{"id": …}`) only after the append, then runs it (invoker.ts).
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
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { encodeRecord, DEFAULT_TTL } from '../event/event.js';
import { problem, readBody, tooLarge } from '../ingress.js';
import type { EventLog } from '../log/interface.js';
import type { BrokerMetrics, Logger } from '../metrics.js';
import { INVOCATION_STREAM, invocationEvent } from './invocation.js';

export const INVOCATIONS_PATH = '/invocations/';

export interface InvocationIngressDeps {
  readonly log: EventLog;
  readonly metrics: BrokerMetrics;
  readonly logger: Logger;
  readonly maxEventBytes: number;
  readonly maxPending: number;
  /** True once the stream exists. */
  readonly ready: () => boolean;
}

/** Headers of the gateway's own, not the client's: never stored with the request. */
const CONTROL = new Set(['x-func-method', 'x-func-path', 'x-func-host', 'x-callback-url', 'host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'prefer']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

const one = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return typeof v === 'string' && v !== '' ? v : undefined;
};

export function httpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export function invocationIngress(deps: InvocationIngressDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  let pending = 0;
  return async (req, res) => {
    const parts = (req.url ?? '').split('?')[0]!.slice(INVOCATIONS_PATH.length).split('/');
    const [namespace, name] = parts;
    if (parts.length !== 2 || !namespace || !name || !NAME.test(namespace) || !NAME.test(name))
      return problem(res, 404, 'no such endpoint: POST invocations to /invocations/{namespace}/{function}');
    if (req.method !== 'POST') return problem(res, 405, 'only POST is supported', { allow: 'POST' });
    const method = one(req.headers, 'x-func-method');
    const path = one(req.headers, 'x-func-path');
    const host = one(req.headers, 'x-func-host');
    const callback = one(req.headers, 'x-callback-url');
    if (!method || !TOKEN.test(method)) return problem(res, 400, 'X-Func-Method must name an HTTP method');
    if (!path || !path.startsWith('/') || /[\s\u0000-\u001f]/.test(path)) return problem(res, 400, 'X-Func-Path must be an absolute path');
    if (!host || /[\s/\u0000-\u001f]/.test(host)) return problem(res, 400, 'X-Func-Host must be a host');
    if (callback !== undefined && !httpUrl(callback)) return problem(res, 400, 'X-Callback-Url must be an absolute http or https URL');
    if (Number(req.headers['content-length']) > deps.maxEventBytes) return tooLarge(req, res, deps.maxEventBytes);
    const body = await readBody(req, deps.maxEventBytes);
    if (!body) return tooLarge(req, res, deps.maxEventBytes);
    if (!deps.ready()) return problem(res, 503, 'invocations cannot be stored yet', { 'retry-after': '1' });
    if (pending >= deps.maxPending) return problem(res, 429, 'too many invocations are waiting to be stored', { 'retry-after': '1' });
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k, v]) => v !== undefined && !CONTROL.has(k))) as Record<string, string | string[]>;
    const id = randomUUID();
    const event = invocationEvent({ id, namespace, name, method, path, host, headers, body, ...(callback ? { callback } : {}) });
    pending++;
    try {
      await deps.log.append(INVOCATION_STREAM, [encodeRecord({ event, ttl: DEFAULT_TTL })]);
    } catch (err) {
      deps.logger('warn', 'invocation not stored', { function: `${namespace}/${name}`, error: (err as Error).message });
      return problem(res, 503, 'the invocation could not be stored; nothing was accepted, send it again', { 'retry-after': '1' });
    } finally {
      pending--;
    }
    deps.metrics.inc('accepted', { broker: INVOCATION_STREAM });
    const answer = JSON.stringify({ id });
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer), 'x-call-id': id }).end(answer);
  };
}
