/**
 * CloudEvents in and out. The cheap header check runs on every request; the SDK is loaded only when
 * a request or a return value involves an event, and each event is decoded and validated once.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { isJsonType, mediaType } from './body.js';
import { RuntimeError } from './errors.js';
import type { CloudEventLike } from './types.js';

type Sdk = typeof import('cloudevents');
const requireLazy = createRequire(import.meta.url);
let sdk: Sdk | undefined;

/** The cloudevents SDK, required on first use (it is CommonJS, so this is synchronous). */
export function cloudEventsSdk(): Sdk {
  return (sdk ??= requireLazy('cloudevents') as Sdk);
}

const SPEC_VERSIONS = ['1.0', '0.3'] as const;
const BATCH_TYPE = 'application/cloudevents-batch+json';

/** A `ce-specversion` header (binary mode) or a cloudevents content type (structured, batch). */
export function isCloudEventRequest(headers: IncomingHttpHeaders): boolean {
  if (headers['ce-specversion'] !== undefined) return true;
  const ct = headers['content-type'];
  return ct !== undefined && ct.startsWith('application/cloudevents');
}

function invalid(reason: string): RuntimeError {
  return new RuntimeError('invalid_cloudevent', reason);
}

function reasonOf(err: unknown): string {
  const e = err as { message?: string; errors?: unknown[] };
  const details = Array.isArray(e.errors) && e.errors.length > 0
    ? `: ${e.errors.map((x) => (typeof x === 'object' && x ? `${(x as { instancePath?: string }).instancePath || '/'} ${(x as { message?: string }).message}` : String(x))).join('; ')}`
    : '';
  return `${(e.message ?? String(err)).split('\n')[0]}${details}`;
}

function checkVersion(version: unknown): void {
  if (!(SPEC_VERSIONS as readonly unknown[]).includes(version)) {
    throw invalid(`Unsupported CloudEvents spec version "${String(version)}"; supported: ${SPEC_VERSIONS.join(', ')}.`);
  }
}

function validated<T extends CloudEventLike>(event: T & { validate(): boolean }): T {
  checkVersion(event.specversion);
  try {
    event.validate();
  } catch (err) {
    throw invalid(`The CloudEvent is invalid: ${reasonOf(err)}.`);
  }
  return event;
}

function binaryData(raw: Buffer, type: string): unknown {
  if (raw.length === 0) return undefined;
  if (isJsonType(type) || type === 'text/json') {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw invalid(`The event data is not valid JSON: ${(err as Error).message}.`);
    }
  }
  return type.startsWith('text/') ? raw.toString('utf8') : raw;
}

/**
 * Binary mode, decoded here rather than by HTTP.toEvent: the SDK copies and re-scans the headers
 * twice and its JSON parser builds two ValidationErrors (stack traces) per call even when nothing
 * is wrong — most of the cost of an event request. The event is the SDK's CloudEvent all the same,
 * validated once by the SDK's own schema.
 */
function decodeBinary(headers: IncomingHttpHeaders, raw: Buffer, type: string): CloudEventLike {
  for (const h of ['ce-id', 'ce-source', 'ce-type'] as const) {
    if (!headers[h]) throw invalid(`Binary-mode CloudEvent without the required ${h} header.`);
  }
  checkVersion(headers['ce-specversion']);
  const attributes: Record<string, unknown> = {};
  for (const name in headers) {
    // `ce-` prefix, tested by char codes: this loop sees every header of every event request.
    if (name.charCodeAt(0) === 99 && name.charCodeAt(1) === 101 && name.charCodeAt(2) === 45) attributes[name.slice(3)] = headers[name];
  }
  if (attributes.time !== undefined) {
    const time = Date.parse(String(attributes.time));
    if (Number.isNaN(time)) throw invalid(`The ce-time header is not an RFC 3339 timestamp: "${String(attributes.time)}".`);
    attributes.time = new Date(time).toISOString();
  }
  if (headers['content-type'] !== undefined) attributes.datacontenttype = headers['content-type'];
  attributes.data = binaryData(raw, type);
  const { CloudEvent } = cloudEventsSdk();
  return validated(new CloudEvent(attributes as never, false) as unknown as CloudEventLike & { validate(): boolean });
}

/** Decodes the request into events (one, or several in batch mode); throws invalid_cloudevent. */
export function decodeCloudEvents(headers: IncomingHttpHeaders, raw: Buffer): CloudEventLike[] {
  const type = mediaType(headers['content-type']);
  if (headers['ce-specversion'] !== undefined && !type.startsWith('application/cloudevents')) return [decodeBinary(headers, raw, type)];
  const { HTTP } = cloudEventsSdk();
  // JSON and text data are handed over as text so the SDK's parser decides; other data stays bytes.
  const textual = type === '' || type.startsWith('text/') || type.includes('json');
  const body = raw.length === 0 ? undefined : textual ? raw.toString('utf8') : raw;
  let decoded: ReturnType<Sdk['HTTP']['toEvent']>;
  try {
    decoded = HTTP.toEvent({ headers, body });
  } catch (err) {
    throw invalid(`The CloudEvent could not be decoded: ${reasonOf(err)}.`);
  }
  const events = (Array.isArray(decoded) ? decoded : [decoded]) as unknown as (CloudEventLike & { validate(): boolean })[];
  // Batch members were validated by the SDK's strict constructor already.
  if (type === BATCH_TYPE) for (const ev of events) checkVersion(ev.specversion);
  else for (const ev of events) validated(ev);
  return events;
}

/** Any CloudEvent: an instance of any copy of the SDK, or an object with the required attributes. */
export function isCloudEvent(value: unknown): value is CloudEventLike {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.specversion === 'string' && typeof v.id === 'string' && typeof v.source === 'string' && typeof v.type === 'string';
}

/** Binary-mode HTTP message for an event; a foreign or plain event is rebuilt (and validated) first. */
export function encodeBinary(event: CloudEventLike): { headers: Record<string, unknown>; body: unknown } {
  const { CloudEvent, HTTP } = cloudEventsSdk();
  const own = event instanceof CloudEvent ? event : new CloudEvent({ ...event } as never);
  return HTTP.binary(own);
}

/** Structured JSON of several events, for the reply to a batch. */
export function encodeBatch(events: CloudEventLike[]): string {
  const { CloudEvent } = cloudEventsSdk();
  return JSON.stringify(events.map((e) => (e instanceof CloudEvent ? e : new CloudEvent({ ...e } as never))));
}

export function newCloudEvent(attributes: Record<string, unknown>): CloudEventLike {
  const { CloudEvent } = cloudEventsSdk();
  return new CloudEvent(attributes as never) as unknown as CloudEventLike;
}
