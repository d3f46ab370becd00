/**
 * An asynchronous invocation of a function (`Prefer: respond-async` at the gateway), as the broker
 * keeps it: a CloudEvent in the log's `invocations` stream, so it is durable on the same engine as
 * the Brokers' events (SQLite or NATS JetStream) and read by the same tools. The request's body is
 * the event's data (bytes as they came); what is needed to send it again travels in extensions:
 *
 * | attribute         | holds                                                        |
 * | ----------------- | ------------------------------------------------------------ |
 * | `id`              | the call id answered to the client (`X-Call-Id`)             |
 * | `type`            | `dev.func.invocation`                                        |
 * | `source`          | `/apis/serving.knative.dev/v1/namespaces/<ns>/services/<fn>` |
 * | `funcmethod`      | the request's method                                         |
 * | `funcpath`        | its path and query                                           |
 * | `funchost`        | its Host (the function's URL host, which the gateway routes) |
 * | `funcheaders`     | its end-to-end headers, as JSON                              |
 * | `funccallback`    | `X-Callback-Url`, when given                                 |
 */
import type { CloudEvent } from '../event/event.js';

export const INVOCATION_STREAM = 'invocations';
export const INVOCATION_TYPE = 'dev.func.invocation';

export interface Invocation {
  readonly id: string;
  readonly namespace: string;
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly callback?: string;
  readonly body: Uint8Array;
}

const SOURCE = /^\/apis\/serving\.knative\.dev\/v1\/namespaces\/([^/]+)\/services\/([^/]+)$/;

export const invocationSource = (namespace: string, name: string) => `/apis/serving.knative.dev/v1/namespaces/${namespace}/services/${name}`;

export function invocationEvent(inv: Invocation): CloudEvent {
  const contentType = inv.headers['content-type'];
  const attributes: Record<string, string> = {
    specversion: '1.0',
    id: inv.id,
    type: INVOCATION_TYPE,
    source: invocationSource(inv.namespace, inv.name),
    time: new Date().toISOString(),
    funcmethod: inv.method,
    funcpath: inv.path,
    funchost: inv.host,
    funcheaders: JSON.stringify(inv.headers),
    ...(typeof contentType === 'string' ? { datacontenttype: contentType } : {}),
    ...(inv.callback ? { funccallback: inv.callback } : {}),
  };
  return inv.body.length > 0 ? { attributes, data: inv.body } : { attributes };
}

/** The invocation an event of the stream holds; undefined for anything else. */
export function invocationOf(event: CloudEvent): Invocation | undefined {
  const a = event.attributes;
  const where = typeof a.source === 'string' ? SOURCE.exec(a.source) : null;
  if (a.type !== INVOCATION_TYPE || !where || typeof a.funcmethod !== 'string' || typeof a.funcpath !== 'string' || typeof a.funchost !== 'string') return undefined;
  let headers: Record<string, string | string[]>;
  try {
    headers = JSON.parse(String(a.funcheaders ?? '{}')) as Record<string, string | string[]>;
  } catch {
    return undefined;
  }
  return {
    id: String(a.id),
    namespace: where[1]!,
    name: where[2]!,
    method: a.funcmethod,
    path: a.funcpath,
    host: a.funchost,
    headers,
    ...(typeof a.funccallback === 'string' ? { callback: a.funccallback } : {}),
    body: event.data ?? new Uint8Array(0),
  };
}

/** What a dead-letter sink gets of an invocation: the request's body and identity, not its headers (credentials). */
export function deadLetterBase(event: CloudEvent): CloudEvent {
  const { funcheaders: _h, ...attributes } = event.attributes;
  return event.data ? { attributes, data: event.data } : { attributes };
}
