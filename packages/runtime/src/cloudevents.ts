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

const ATTRIBUTE_NAME = /^[a-z0-9]+$/;
const REQUIRED = ['id', 'source', 'type'] as const;

/**
 * The CloudEvents 1.0 rules an event's attributes must meet (required attributes are non-empty
 * strings, names are lower-case alphanumerics, time is a timestamp); undefined when they hold.
 */
export function attributeProblem(attributes: Record<string, unknown>): string | undefined {
  for (const name of REQUIRED) {
    const v = attributes[name];
    if (typeof v !== 'string' || v.length === 0) return `the required attribute "${name}" is missing or empty`;
  }
  for (const name in attributes) {
    if (name !== 'data' && name !== 'data_base64' && attributes[name] !== undefined && !ATTRIBUTE_NAME.test(name)) return `attribute name "${name}" is not lower-case alphanumeric`;
  }
  const time = attributes.time;
  if (time !== undefined && (typeof time !== 'string' || Number.isNaN(Date.parse(time)))) return `time "${String(time)}" is not an RFC 3339 timestamp`;
  return undefined;
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
 * checked once against the spec's attribute rules (attributeProblem).
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
  const problem = attributeProblem(attributes);
  if (problem) throw invalid(`The CloudEvent is invalid: ${problem}.`);
  const { CloudEvent } = cloudEventsSdk();
  // Checked above; the SDK's strict mode would run its whole JSON schema a second time.
  return new CloudEvent(attributes as never, false) as unknown as CloudEventLike;
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

const DEFAULT_DATA_TYPE = 'application/json; charset=utf-8';
const NOT_HEADERS = new Set(['data', 'data_base64', 'datacontenttype']);

/**
 * Binary mode out: each attribute becomes a `ce-` header and the data the body, as HTTP.binary
 * does, written as a flat header list that goes straight to writeHead (no intermediate objects).
 * Works for events of any SDK copy or plain objects; throws when the event breaks the spec.
 */
export function encodeBinary(event: CloudEventLike, base: readonly string[]): { headers: string[]; body: string | Uint8Array | undefined } {
  const attributes = event as Record<string, unknown>;
  const problem = checkVersionOf(event.specversion) ?? attributeProblem(attributes);
  if (problem) throw new Error(problem);
  const headers = base.concat('content-type', typeof event.datacontenttype === 'string' ? event.datacontenttype : DEFAULT_DATA_TYPE);
  for (const name of Object.keys(attributes)) {
    const value = attributes[name];
    if (value !== undefined && value !== null && !NOT_HEADERS.has(name)) headers.push(`ce-${name}`, value instanceof Date ? value.toISOString() : String(value));
  }
  const data = event.data;
  const body = data === undefined || data === null ? undefined : typeof data === 'string' || data instanceof Uint8Array ? data : JSON.stringify(data);
  return { headers, body };
}

function checkVersionOf(version: unknown): string | undefined {
  return (SPEC_VERSIONS as readonly unknown[]).includes(version) ? undefined : `unsupported spec version "${String(version)}"`;
}

/** Structured JSON of several events, for the reply to a batch. */
export function encodeBatch(events: CloudEventLike[]): string {
  const { CloudEvent } = cloudEventsSdk();
  return JSON.stringify(events.map((e) => (e instanceof CloudEvent ? e : new CloudEvent({ ...e } as never))));
}

/** A new SDK CloudEvent (id and time filled in); throws a TypeError naming a broken attribute. */
export function newCloudEvent(attributes: Record<string, unknown>): CloudEventLike {
  const { CloudEvent } = cloudEventsSdk();
  const event = new CloudEvent(attributes as never, false) as unknown as CloudEventLike;
  const problem = checkVersionOf(event.specversion) ?? attributeProblem(event);
  if (problem) throw new TypeError(`Invalid CloudEvent: ${problem}.`);
  return event;
}
