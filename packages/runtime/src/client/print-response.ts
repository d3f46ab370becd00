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

interface DecodedEvent {
  /** The attributes the reply carried, as sent (the SDK would fill in an id and a time it did not send). */
  attributes: [string, string][];
  data: unknown;
  datacontenttype: string | undefined;
}

const REQUIRED = ['specversion', 'id', 'source', 'type'];

function sentAttributes(res: ReceivedResponse, structured: boolean): [string, string][] {
  if (!structured) {
    const attrs = res.headers.filter(([k]) => k.toLowerCase().startsWith('ce-')).map(([k, v]): [string, string] => [k.slice(3).toLowerCase(), v]);
    const type = headerOf(res.headers, 'content-type');
    return type ? [...attrs, ['datacontenttype', type]] : attrs;
  }
  const doc = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
  return Object.entries(doc).filter(([k]) => k !== 'data' && k !== 'data_base64').map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]);
}

/** The event, or undefined when the reply is not a CloudEvent. Throws if it claims to be one and is malformed. */
function replyEvent(res: ReceivedResponse): DecodedEvent | undefined {
  const type = headerOf(res.headers, 'content-type') ?? '';
  const structured = type.startsWith('application/cloudevents+json');
  if (headerOf(res.headers, 'ce-specversion') === undefined && !structured) return undefined;
  const attributes = sentAttributes(res, structured);
  const missing = REQUIRED.filter((k) => !attributes.some(([name]) => name === k));
  if (missing.length > 0) throw new Error(`it has no ${missing.join(', ')}`);
  const { HTTP } = requireLazy('cloudevents') as typeof import('cloudevents');
  const event = HTTP.toEvent({ headers: Object.fromEntries(res.headers), body: res.body.length ? res.body.toString('utf8') : undefined });
  const one = (Array.isArray(event) ? event[0] : event) as unknown as { data?: unknown; datacontenttype?: string };
  return { attributes, data: one.data, datacontenttype: one.datacontenttype };
}

function showEvent(event: DecodedEvent): string {
  const lines = event.attributes.map(([k, v]) => `  ${k}: ${v}`);
  return `CloudEvent:\n${lines.join('\n')}\nData:\n${showValue(event.data, event.datacontenttype)}`;
}

export function describeResponse(res: ReceivedResponse): string {
  const head = [`HTTP ${res.status} ${res.statusText}`.trimEnd(), ...res.headers.map(([k, v]) => `${k}: ${v}`)].join('\n');
  let event: DecodedEvent | undefined;
  try {
    event = replyEvent(res);
  } catch (err) {
    return `${head}\n\n${showBody(res.body, headerOf(res.headers, 'content-type'))}\n(the reply claims to be a CloudEvent but is not a valid one: ${(err as Error).message})\n`;
  }
  return `${head}\n\n${event ? showEvent(event) : showBody(res.body, headerOf(res.headers, 'content-type'))}\n`;
}
