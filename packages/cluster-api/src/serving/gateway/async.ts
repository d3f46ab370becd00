/**
 * Asynchronous invocation at the gateway: a request to a function's URL that carries
 * `Prefer: respond-async` (RFC 7240) is not proxied to the revision but handed, body and headers,
 * to the broker (`POST <broker>/invocations/{namespace}/{function}`), which stores it durably and
 * runs it later with the function's delivery policy (broker/invocation/). The client gets the
 * broker's 202 at once, with `Preference-Applied: respond-async` and the call's id (`X-Call-Id`,
 * and `{"id": …}`); `X-Callback-Url` names where the function's answer will be POSTed. Without a
 * broker the preference is ignored (RFC 7240 lets a server do so) and the request served as usual.
 */
import { request, type Agent, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

/** Whether a Prefer header (one or several, comma-separated preferences, each `token[=value][;params]`) asks for `respond-async`. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = prefer === undefined ? [] : Array.isArray(prefer) ? prefer : [prefer];
  return values.some((v) => v.split(',').some((p) => p.split(';')[0]!.split('=')[0]!.trim().toLowerCase() === 'respond-async'));
}

export interface AsyncTarget {
  readonly brokerUrl: string;
  readonly namespace: string;
  readonly name: string;
  /** The client's headers a proxy passes on (no hop-by-hop ones). */
  readonly headers: IncomingHttpHeaders;
  readonly agent: Agent;
}

const answer = (res: ServerResponse, code: number, text: string, headers: Record<string, string> = {}): void => {
  if (res.headersSent) return void res.destroy();
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
};

/** Queues `req` at the broker and answers the client with the broker's answer (202 with the preference applied). */
export function queueAsync(req: IncomingMessage, res: ServerResponse, to: AsyncTarget): void {
  const { prefer: _prefer, host, ...headers } = to.headers;
  const url = new URL(`/invocations/${encodeURIComponent(to.namespace)}/${encodeURIComponent(to.name)}`, to.brokerUrl);
  const upstream = request(url, {
    method: 'POST',
    agent: to.agent,
    headers: { ...headers, 'x-func-method': req.method ?? 'GET', 'x-func-path': req.url ?? '/', 'x-func-host': String(host ?? '') },
  });
  upstream.on('response', (up) => {
    const queued = up.statusCode === 202;
    const passOn: Record<string, string> = {};
    for (const h of ['content-type', 'content-length', 'x-call-id', 'retry-after']) if (typeof up.headers[h] === 'string') passOn[h] = up.headers[h] as string;
    res.writeHead(up.statusCode ?? 502, { ...passOn, ...(queued ? { 'preference-applied': 'respond-async' } : {}) });
    up.pipe(res);
    up.on('error', () => res.destroy());
  });
  upstream.on('error', () => answer(res, 503, 'the invocation could not be queued now; send it again\n', { 'retry-after': '1' }));
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}
