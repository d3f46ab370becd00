/**
 * The CloudEvents HTTP protocol binding 1.0, both ways: requests in binary, structured and batched
 * mode into events (ingress, and replies in a response), and events out in binary mode (delivery).
 * The data is kept as bytes throughout; structured `data` becomes the bytes a binary-mode sender
 * would have sent (`data_base64` decoded, JSON values serialised, strings as they are).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { AttributeValue, CloudEvent } from './event.js';
import { invalidEvent } from './validate.js';

export const STRUCTURED = 'application/cloudevents+json';
export const BATCH = 'application/cloudevents-batch+json';

/** A request that is not (a batch of) valid CloudEvents: the status and the reason for the sender. */
export interface Rejection {
  readonly status: 400 | 415;
  readonly detail: string;
}

export function mediaType(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

function isJsonMedia(type: string): boolean {
  return type === 'application/json' || type === 'text/json' || type.endsWith('+json');
}

/** Header values: printable ASCII but `"` and `%` as is, everything else percent-encoded UTF-8 (binding §3.1.3.2). */
export function encodeHeaderValue(v: string): string {
  let out = '';
  for (const ch of v) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x21 && c <= 0x7e && c !== 0x22 && c !== 0x25) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function decodeHeaderValue(v: string): string {
  if (!v.includes('%')) return v;
  const bytes: number[] = [];
  for (let i = 0; i < v.length; i++) {
    const hex = v[i] === '%' ? v.slice(i + 1, i + 3) : '';
    if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(v[i]!, 'latin1'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function fromBinary(headers: IncomingHttpHeaders, body: Buffer): CloudEvent | Rejection {
  const attributes: Record<string, AttributeValue> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('ce-') || value === undefined) continue;
    attributes[name.slice(3)] = decodeHeaderValue(Array.isArray(value) ? value.join(',') : value);
  }
  if (headers['content-type'] !== undefined) attributes.datacontenttype = headers['content-type'];
  const why = invalidEvent(attributes);
  if (why) return { status: 400, detail: why };
  return body.length > 0 ? { attributes, data: body } : { attributes };
}

function dataBytes(data: unknown, contentType: string | undefined): Buffer {
  const type = contentType === undefined ? 'application/json' : mediaType(contentType);
  if (typeof data === 'string' && !isJsonMedia(type)) return Buffer.from(data, 'utf8');
  return Buffer.from(JSON.stringify(data), 'utf8');
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** One structured-mode event (a JSON object), or why it is not one. */
export function fromStructured(value: unknown, where = 'the event'): CloudEvent | Rejection {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { status: 400, detail: `${where} is not a JSON object` };
  const { data, data_base64: base64, ...attributes } = value as Record<string, unknown>;
  if (data !== undefined && base64 !== undefined) return { status: 400, detail: `${where} has both data and data_base64` };
  const why = invalidEvent(attributes);
  if (why) return { status: 400, detail: where === 'the event' ? why : `${where}: ${why}` };
  const attrs = attributes as Record<string, AttributeValue>;
  if (base64 !== undefined) {
    if (typeof base64 !== 'string' || !BASE64.test(base64)) return { status: 400, detail: `${where}: data_base64 is not base64` };
    return { attributes: attrs, data: Buffer.from(base64, 'base64') };
  }
  if (data === undefined) return { attributes: attrs };
  return { attributes: attrs, data: dataBytes(data, attrs.datacontenttype as string | undefined) };
}

function parseJson(body: Buffer): { value: unknown } | Rejection {
  try {
    return { value: JSON.parse(body.toString('utf8')) };
  } catch {
    return { status: 400, detail: 'the body is not valid JSON' };
  }
}

/**
 * The events of one HTTP message, by content mode: `application/cloudevents+json` is one structured
 * event, `application/cloudevents-batch+json` an array of them (split here; one invalid event rejects
 * the batch), any other message with `ce-specversion` is binary. Anything else is not an event.
 */
export function decodeMessage(headers: IncomingHttpHeaders, body: Buffer): CloudEvent[] | Rejection {
  const type = mediaType(headers['content-type']);
  if (type === STRUCTURED || type === BATCH) {
    const parsed = parseJson(body);
    if (!('value' in parsed)) return parsed;
    if (type === STRUCTURED) {
      const event = fromStructured(parsed.value);
      return 'status' in event ? event : [event];
    }
    if (!Array.isArray(parsed.value)) return { status: 400, detail: 'a batch must be a JSON array of events' };
    const events: CloudEvent[] = [];
    for (const [i, item] of parsed.value.entries()) {
      const event = fromStructured(item, `event ${i} of the batch`);
      if ('status' in event) return event;
      events.push(event);
    }
    return events;
  }
  if (type.startsWith('application/cloudevents')) return { status: 415, detail: `event format ${type} is not supported (use JSON)` };
  if (headers['ce-specversion'] === undefined) return { status: 400, detail: 'not a CloudEvent: no ce-specversion header and no CloudEvents content type' };
  const event = fromBinary(headers, body);
  return 'status' in event ? event : [event];
}

/** Binary mode: one `ce-` header per attribute, `datacontenttype` as Content-Type, the data as the body. */
export function encodeBinary(event: CloudEvent, headers: Record<string, string>): Uint8Array | undefined {
  for (const [name, value] of Object.entries(event.attributes)) {
    if (name === 'datacontenttype') headers['content-type'] = String(value);
    else headers[`ce-${name}`] = encodeHeaderValue(typeof value === 'string' ? value : String(value));
  }
  // A structured event without datacontenttype carries JSON data (JSON format §3.1).
  if (event.data && headers['content-type'] === undefined) headers['content-type'] = 'application/json';
  return event.data;
}
