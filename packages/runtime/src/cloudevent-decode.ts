/**
 * CloudEvents in: binary, structured and batch mode, each event checked against the same rules
 * (cloudevents.ts attributeProblem) before it becomes an SDK CloudEvent, so the three modes accept
 * and reject alike. Binary mode is read straight from the `ce-*` headers: the SDK's HTTP.toEvent
 * copies and re-scans the headers and builds two ValidationErrors (stack traces) per call even
 * when nothing is wrong; for structured events it invents an id when there is none.
 */
import { Buffer } from 'node:buffer';
import type { IncomingHttpHeaders } from 'node:http';
import { isJsonType, mediaType } from './body.js';
import { attributeProblem, sdkCloudEvent, invalidEvent, versionProblem } from './cloudevents.js';
import type { CloudEventLike } from './types.js';

const BATCH_TYPE = 'application/cloudevents-batch+json';

export interface DecodedEvents {
  events: CloudEventLike[];
  batch: boolean;
  /** What `context.body` holds: the event data (binary), the parsed JSON (structured, batch). */
  body: unknown;
}

function parseJson(raw: Buffer, what: string): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw invalidEvent(`${what} is not valid JSON: ${(err as Error).message}.`);
  }
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function binaryData(raw: Buffer, type: string): unknown {
  if (raw.length === 0) return undefined;
  if (isJsonType(type) || type === 'text/json') return parseJson(raw, 'The event data');
  return type.startsWith('text/') ? raw.toString('utf8') : raw;
}

/** The SDK's CloudEvent for attributes that pass the checks (the SDK's strict mode would run its JSON schema as well). */
function toEvent(attributes: Record<string, unknown>, where: string, prefix = ''): CloudEventLike {
  const problem = versionProblem(attributes.specversion, prefix) ?? attributeProblem(attributes, prefix);
  if (problem) throw invalidEvent(`${where} is invalid: ${problem}.`);
  if (attributes.time !== undefined) attributes.time = new Date(Date.parse(String(attributes.time))).toISOString();
  return sdkCloudEvent(attributes);
}

/** The headers of the attributes every event has, read by name rather than sliced and stored one by one. */
function isRequiredHeader(name: string): boolean {
  return name === 'ce-specversion' || name === 'ce-id' || name === 'ce-source' || name === 'ce-type';
}

function decodeBinary(headers: IncomingHttpHeaders, raw: Buffer, type: string): CloudEventLike {
  const attributes: Record<string, unknown> = { specversion: headers['ce-specversion'], id: headers['ce-id'], source: headers['ce-source'], type: headers['ce-type'] };
  for (const name in headers) {
    // `ce-` prefix, tested by char codes: this loop sees every header of every event request.
    if (name.charCodeAt(0) === 99 && name.charCodeAt(1) === 101 && name.charCodeAt(2) === 45 && !isRequiredHeader(name)) attributes[name.slice(3)] = headers[name];
  }
  if (headers['content-type'] !== undefined) attributes.datacontenttype = headers['content-type'];
  attributes.data = binaryData(raw, type);
  return toEvent(attributes, 'The binary-mode CloudEvent', 'ce-');
}

/** One event of a structured body or a batch: an object of attributes, data inline or base64. */
function decodeStructured(value: unknown, where: string): CloudEventLike {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidEvent(`${where} must be an object holding the event's attributes, got ${kindOf(value)}.`);
  }
  const attributes = { ...(value as Record<string, unknown>) };
  const encoded = typeof attributes.data_base64 === 'string' ? attributes.data_base64 : attributes.datacontentencoding === 'base64' ? attributes.data : undefined;
  if (typeof encoded === 'string') {
    attributes.data = Buffer.from(encoded, 'base64');
    delete attributes.data_base64;
    delete attributes.datacontentencoding;
  }
  return toEvent(attributes, where);
}

/** Decodes the request into events (one, or several in batch mode); throws invalid_cloudevent. */
export function decodeCloudEvents(headers: IncomingHttpHeaders, raw: Buffer): DecodedEvents {
  const type = mediaType(headers['content-type']);
  if (!type.startsWith('application/cloudevents')) {
    const event = decodeBinary(headers, raw, type);
    return { events: [event], batch: false, body: event.data };
  }
  const parsed = parseJson(raw, 'The CloudEvent body');
  if (type !== BATCH_TYPE) return { events: [decodeStructured(parsed, 'The CloudEvent')], batch: false, body: parsed };
  if (!Array.isArray(parsed)) throw invalidEvent(`A batch must be an array of events in JSON, got ${kindOf(parsed)}.`);
  return { events: parsed.map((entry, i) => decodeStructured(entry, `Batch entry ${i}`)), batch: true, body: parsed };
}
