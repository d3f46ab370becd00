/**
 * What `func-runtime invoke` prints: the status line, the headers as received, then the body —
 * JSON indented, text as is, other bytes summarised (never dumped to a terminal). A reply that is
 * a CloudEvent (binary or structured mode) is decoded, its attributes listed before its data.
 */
import { createRequire } from 'node:module';

const requireLazy = createRequire(import.meta.url);

export interface ReceivedResponse {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: Buffer;
}

const TEXTUAL = /^(?:text\/|application\/(?:[\w.-]+\+)?(?:json|xml)\b|application\/(?:javascript|x-www-form-urlencoded|yaml)\b)/i;
const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\b/i;

function headerOf(headers: [string, string][], name: string): string | undefined {
  return headers.find(([k]) => k.toLowerCase() === name)?.[1];
}

function showValue(value: unknown, contentType: string | undefined): string {
  if (value === undefined || value === null) return '(none)';
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return showBody(Buffer.from(value), contentType);
  if (typeof value === 'string') return value;
  return JSON.stringify(value, null, 2);
}

export function showBody(body: Buffer, contentType: string | undefined): string {
  if (body.length === 0) return '(empty body)';
  const type = contentType ?? 'application/octet-stream';
  if (!TEXTUAL.test(type)) return `(${body.length} bytes of ${type})`;
  const text = body.toString('utf8');
  if (!JSON_TYPE.test(type)) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** The decoded event, or undefined when the reply is not a CloudEvent. Throws if it claims to be one and is malformed. */
function replyEvent(res: ReceivedResponse): Record<string, unknown> | undefined {
  const type = headerOf(res.headers, 'content-type') ?? '';
  if (headerOf(res.headers, 'ce-specversion') === undefined && !type.startsWith('application/cloudevents+json')) return undefined;
  const { HTTP } = requireLazy('cloudevents') as typeof import('cloudevents');
  const headers = Object.fromEntries(res.headers);
  const event = HTTP.toEvent({ headers, body: res.body.length ? res.body.toString('utf8') : undefined });
  return (Array.isArray(event) ? event[0] : event) as unknown as Record<string, unknown>;
}

function showEvent(event: Record<string, unknown>): string {
  const attrs = Object.entries(event).filter(([k, v]) => k !== 'data' && k !== 'data_base64' && v !== undefined && typeof v !== 'function');
  const lines = attrs.map(([k, v]) => `  ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `CloudEvent:\n${lines.join('\n')}\nData:\n${showValue(event.data, event.datacontenttype as string | undefined)}`;
}

export function describeResponse(res: ReceivedResponse): string {
  const head = [`HTTP ${res.status} ${res.statusText}`.trimEnd(), ...res.headers.map(([k, v]) => `${k}: ${v}`)].join('\n');
  let event: Record<string, unknown> | undefined;
  try {
    event = replyEvent(res);
  } catch (err) {
    return `${head}\n\n${showBody(res.body, headerOf(res.headers, 'content-type'))}\n(the reply claims to be a CloudEvent but is not a valid one: ${(err as Error).message})\n`;
  }
  return `${head}\n\n${event ? showEvent(event) : showBody(res.body, headerOf(res.headers, 'content-type'))}\n`;
}
