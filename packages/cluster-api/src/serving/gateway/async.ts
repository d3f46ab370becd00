/**
 * Asynchronous invocation at the gateway: a request to a function's URL that carries
 * `Prefer: respond-async` (RFC 7240) is not proxied to the revision but handed, body and headers,
 * to the broker's invocation queue (broker/invocation/queue.ts), which stores it durably and runs
 * it later with the function's delivery policy. The client gets 202 once it is stored, with
 * `Preference-Applied: respond-async` and the call's id (`X-Call-Id`, and `{"id": …}`);
 * `X-Callback-Url` names where the function's answer will be POSTed. Without a queue the preference
 * is ignored (RFC 7240 lets a server do so) and the request served as usual.
 *
 * The queue is the broker's own object when the broker runs in the gateway's process (`serve`), or
 * `httpInvocationQueue`: the broker's `POST /invocations/{namespace}/{function}` over keep-alive
 * HTTP, for a gateway in a process of its own.
 */
import { Agent, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { answerQueued, type InvocationQueue, type Queued, type Refusal } from '../../broker/invocation/queue.js';

/** Whether a Prefer header (one or several, comma-separated preferences, each `token[=value][;params]`) asks for `respond-async`. */
export function prefersAsync(prefer: string | string[] | undefined): boolean {
  const values = prefer === undefined ? [] : Array.isArray(prefer) ? prefer : [prefer];
  return values.some((v) => v.split(',').some((p) => p.split(';')[0]!.split('=')[0]!.trim().toLowerCase() === 'respond-async'));
}

export interface AsyncTarget {
  readonly namespace: string;
  readonly name: string;
  /** The client's headers a proxy passes on (no hop-by-hop ones). */
  readonly headers: IncomingHttpHeaders;
}

const APPLIED = { 'preference-applied': 'respond-async' };
const UNREACHABLE: Refusal = { status: 503, detail: 'the invocation could not be queued now; send it again', retry: true };

/** Queues `req` and answers the client: 202 with the preference applied, or why it was not queued. */
export function queueAsync(req: IncomingMessage, res: ServerResponse, queue: InvocationQueue, to: AsyncTarget): void {
  const callback = to.headers['x-callback-url'];
  const call = {
    namespace: to.namespace,
    name: to.name,
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    host: String(to.headers.host ?? ''),
    headers: to.headers,
    ...(callback ? { callback: String(callback) } : {}),
  };
  queue.queue(call, req).then(
    (q) => answerQueued(req, res, q, q.status === 202 ? APPLIED : {}),
    () => answerQueued(req, res, UNREACHABLE),
  );
}

const REFUSED = new Set([400, 413, 429, 503]);

/** The refusal a broker's problem answer states; a status the queue does not answer is the broker out of reach. */
function refusal(status: number, body: string): Refusal {
  if (!REFUSED.has(status)) return UNREACHABLE;
  let detail: unknown;
  try {
    detail = (JSON.parse(body) as { detail?: unknown }).detail;
  } catch {
    detail = undefined;
  }
  return { status: status as Refusal['status'], detail: typeof detail === 'string' ? detail : UNREACHABLE.detail, ...(status === 429 || status === 503 ? { retry: true as const } : {}) };
}

/** The broker's queue over HTTP (`brokerUrl`: `http://host:port`), on keep-alive connections. */
export function httpInvocationQueue(brokerUrl: () => string | undefined, agent = new Agent({ keepAlive: true })): InvocationQueue {
  return {
    queue: (call, body) =>
      new Promise<Queued>((resolve, reject) => {
        const base = brokerUrl();
        if (!base) return resolve(UNREACHABLE);
        const { prefer: _p, host: _h, 'x-callback-url': _c, ...headers } = call.headers;
        const url = new URL(`/invocations/${encodeURIComponent(call.namespace)}/${encodeURIComponent(call.name)}`, base);
        const upstream = request(url, {
          method: 'POST',
          agent,
          headers: { ...headers, 'x-func-method': call.method, 'x-func-path': call.path, 'x-func-host': call.host, ...(call.callback ? { 'x-callback-url': call.callback } : {}) },
        });
        upstream.on('response', (up) => {
          const chunks: Buffer[] = [];
          up.on('data', (c: Buffer) => chunks.push(c));
          up.on('error', reject);
          up.on('end', () => {
            const id = up.headers['x-call-id'];
            if (up.statusCode === 202 && typeof id === 'string') resolve({ status: 202, id });
            else resolve(refusal(up.statusCode ?? 502, Buffer.concat(chunks).toString('utf8')));
          });
        });
        upstream.on('error', reject);
        body.on('close', () => {
          if (!body.complete) upstream.destroy();
        });
        body.pipe(upstream);
      }),
  };
}
