/**
 * CloudEvents: the cheap "is it an event?" test every request runs, the attribute rules every
 * event in or out must meet, and binary-mode encoding. Decoding requests is cloudevent-decode.ts.
 * The SDK is loaded only when a request or a return value involves an event.
 */
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { RuntimeError } from './errors.js';
import type { CloudEventLike } from './types.js';

type Sdk = typeof import('cloudevents');
const requireLazy = createRequire(import.meta.url);
let sdk: Sdk | undefined;

/** The cloudevents SDK, required on first use (it is CommonJS, so this is synchronous). */
export function cloudEventsSdk(): Sdk {
  return (sdk ??= requireLazy('cloudevents') as Sdk);
}

export const SPEC_VERSIONS = ['1.0', '0.3'] as const;

/** A `ce-specversion` header (binary mode) or a cloudevents content type (structured, batch). */
export function isCloudEventRequest(headers: IncomingHttpHeaders): boolean {
  if (headers['ce-specversion'] !== undefined) return true;
  const ct = headers['content-type'];
  return ct !== undefined && ct.startsWith('application/cloudevents');
}

export function invalidEvent(reason: string): RuntimeError {
  return new RuntimeError('invalid_cloudevent', reason);
}

/** undefined when `version` is one this runtime reads, else what is wrong with it. `prefix`: `ce-` names binary-mode headers. */
export function versionProblem(version: unknown, prefix = ''): string | undefined {
  if (version === undefined || version === null || version === '') return `the required attribute "${prefix}specversion" is missing or empty`;
  return (SPEC_VERSIONS as readonly unknown[]).includes(version) ? undefined : `${prefix}specversion "${String(version)}" is not supported (supported: ${SPEC_VERSIONS.join(', ')})`;
}

/**
 * The SDK's fields: names the name rule lets through without a test (`data_base64` among them,
 * which it would fail). Every attribute of every event in and out is looked up here, so it is a
 * switch over constants rather than a Set: V8 compares property names (interned strings) by
 * identity, where a Set lookup probes a hash table (callgrind: ~1,400 instructions per event
 * request went to Set and Map lookups of attribute names).
 */
function isSdkAttribute(name: string): boolean {
  switch (name) {
    case 'id': case 'time': case 'type': case 'source': case 'specversion': case 'datacontenttype':
    case 'subject': case 'datacontentencoding': case 'dataschema': case 'data_base64': case 'schemaurl': case 'data':
      return true;
    default:
      return false;
  }
}

/** The CloudEvents name rule, lower-case letters and digits, tested by char codes (a regular expression costs far more on names this short). */
function isAttributeName(name: string): boolean {
  if (name.length === 0) return false;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (!((c >= 97 && c <= 122) || (c >= 48 && c <= 57))) return false;
  }
  return true;
}
const REQUIRED = ['id', 'source', 'type'] as const;

function requiredProblem(attributes: Record<string, unknown>, prefix: string): string | undefined {
  for (const name of REQUIRED) {
    const v = attributes[name];
    if (typeof v !== 'string' || v.length === 0) return `the required attribute "${prefix}${name}" is missing or empty`;
  }
  return undefined;
}

function nameProblem(attributes: Record<string, unknown>, prefix: string): string | undefined {
  // Own names only, as encodeBinary sends them (for-in also walks the prototype chain, slowly).
  for (const name of Object.keys(attributes)) {
    if (!isAttributeName(name) && !isSdkAttribute(name) && attributes[name] !== undefined) return `attribute name "${prefix}${name}" is not lower-case alphanumeric`;
  }
  return undefined;
}

function timeProblem(time: unknown, prefix: string): string | undefined {
  if (time !== undefined && (typeof time !== 'string' || Number.isNaN(Date.parse(time)))) return `${prefix}time "${String(time)}" is not an RFC 3339 timestamp`;
  return undefined;
}

/**
 * The CloudEvents 1.0 rules an event's attributes must meet (required attributes are non-empty
 * strings, names are lower-case alphanumerics, time is a timestamp); undefined when they hold.
 */
export function attributeProblem(attributes: Record<string, unknown>, prefix = ''): string | undefined {
  return requiredProblem(attributes, prefix) ?? nameProblem(attributes, prefix) ?? timeProblem(attributes.time, prefix);
}

/** Any CloudEvent: an instance of any copy of the SDK, or an object with the required attributes. */
export function isCloudEvent(value: unknown): value is CloudEventLike {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return typeof v.specversion === 'string' && typeof v.id === 'string' && typeof v.source === 'string' && typeof v.type === 'string';
}


/**
 * The last reply newCloudEvent built and checked (frozen, so it stays valid): encodeBinary, which
 * nearly always gets it next, need not check it again. One slot instead of a WeakSet, whose add
 * and lookup cost more than the check they save; a miss (replies interleaved) just checks again.
 */
let lastChecked: object | undefined;

const LAST_ISO_MINUTE = 253402300740000; // 9999-12-31T23:59Z: later years have six digits
let minute = -1;
let minutePrefix = '';

/**
 * `new Date(ms).toISOString()`, which costs about half a microsecond (as much as the rest of a
 * reply event): the "YYYY-MM-DDTHH:MM:" part is made once a minute, seconds and milliseconds here.
 */
export function isoTime(ms: number): string {
  if (!(ms >= 0 && ms < LAST_ISO_MINUTE && Number.isInteger(ms))) return new Date(ms).toISOString();
  const m = Math.floor(ms / 60000);
  if (m !== minute) {
    minute = m;
    minutePrefix = new Date(m * 60000).toISOString().slice(0, 17);
  }
  const rest = ms - m * 60000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  return `${minutePrefix}${s < 10 ? '0' : ''}${s}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

type EventShell = new () => Record<string, unknown>;
let shell: EventShell | undefined;

/**
 * An empty object with the SDK's CloudEvent prototype, made by `new` so that V8 sizes it for the
 * fields sdkCloudEvent sets and keeps them in the object (Object.create gives a small object
 * whose fields spill into a separate store that grows as they are added).
 */
function eventShell(): EventShell {
  if (shell) return shell;
  const make = function () {} as unknown as EventShell;
  make.prototype = cloudEventsSdk().CloudEvent.prototype;
  return (shell = make);
}

/**
 * The SDK's CloudEvent for `a`, with the fields its constructor sets, in its order, frozen, with its
 * prototype (so `instanceof CloudEvent` and its methods work), built without the constructor: per
 * call that copies the attributes, deletes a dozen keys from the copy (which turns it into a slow
 * dictionary object) and walks what is left with Object.entries, the largest single cost of an
 * event request. Not checked here: callers check the attributes (attributeProblem) first.
 */
export function sdkCloudEvent(a: Record<string, unknown>): CloudEventLike {
  const e = new (eventShell())();
  e.id = a.id || randomUUID();
  e.time = a.time || isoTime(Date.now());
  e.type = a.type;
  e.source = a.source;
  e.specversion = a.specversion || '1.0';
  e.datacontenttype = a.datacontenttype;
  e.subject = a.subject;
  e.datacontentencoding = a.datacontentencoding;
  e.dataschema = a.dataschema;
  e.data_base64 = a.data_base64;
  if (e.data_base64) e.data = Uint8Array.from(Buffer.from(String(e.data_base64), 'base64'));
  e.schemaurl = a.schemaurl;
  const data = a.data;
  if (ArrayBuffer.isView(data)) e.data_base64 = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
  e.data = data !== undefined ? data : e.data;
  if (e.specversion === '1.0' && e.schemaurl) throw new TypeError('cannot set schemaurl on version 1.0 event');
  if (e.specversion === '0.3' && e.dataschema) throw new TypeError('cannot set dataschema on version 0.3 event');
  for (const key in a) if (!isSdkAttribute(key)) e[key] = a[key];
  return Object.freeze(e) as CloudEventLike;
}

const DEFAULT_DATA_TYPE = 'application/json; charset=utf-8';
/** The header of an attribute: constants for the SDK's (no string built per header of every reply), '' for those that are no header. */
function headerOf(name: string): string {
  switch (name) {
    case 'data': case 'data_base64': case 'datacontenttype': return '';
    case 'id': return 'ce-id';
    case 'time': return 'ce-time';
    case 'type': return 'ce-type';
    case 'source': return 'ce-source';
    case 'specversion': return 'ce-specversion';
    case 'subject': return 'ce-subject';
    case 'datacontentencoding': return 'ce-datacontentencoding';
    case 'dataschema': return 'ce-dataschema';
    case 'schemaurl': return 'ce-schemaurl';
    default: return `ce-${name}`;
  }
}

/**
 * Binary mode out: each attribute becomes a `ce-` header and the data the body, as HTTP.binary
 * does, written as a flat header list that goes straight to writeHead (no intermediate objects).
 * Works for events of any SDK copy or plain objects; throws when the event breaks the spec.
 */
export function encodeBinary(event: CloudEventLike, base: readonly string[]): { headers: string[]; body: string | Uint8Array | undefined } {
  const attributes = event as Record<string, unknown>;
  const problem = event === lastChecked ? undefined : versionProblem(event.specversion) ?? attributeProblem(attributes);
  if (problem) throw new Error(problem);
  // Copied by hand: concat costs three times as much on lists this short.
  const headers: string[] = [];
  for (let i = 0; i < base.length; i++) headers.push(base[i]!);
  headers.push('content-type', typeof event.datacontenttype === 'string' ? event.datacontenttype : DEFAULT_DATA_TYPE);
  for (const name of Object.keys(attributes)) {
    const value = attributes[name];
    const header = headerOf(name);
    if (value !== undefined && value !== null && header !== '') headers.push(header, typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : String(value));
  }
  const data = event.data;
  const body = data === undefined || data === null ? undefined : typeof data === 'string' || data instanceof Uint8Array ? data : JSON.stringify(data);
  return { headers, body };
}

/** Structured JSON of several events, for the reply to a batch. */
export function encodeBatch(events: CloudEventLike[]): string {
  const { CloudEvent } = cloudEventsSdk();
  return JSON.stringify(events.map((e) => (e instanceof CloudEvent ? e : new CloudEvent({ ...e } as never))));
}

/** A new SDK CloudEvent (id and time filled in); throws a TypeError naming a broken attribute. */
export function newCloudEvent(attributes: Record<string, unknown>): CloudEventLike {
  const event = sdkCloudEvent(attributes);
  // attributeProblem(event), read cheaply: the event's names are the SDK's (valid) and the caller's,
  // and an id or a time filled in here is valid by construction.
  const problem = versionProblem(event.specversion) ?? requiredProblem(event, '') ?? nameProblem(attributes, '') ?? timeProblem(attributes.time || undefined, '');
  if (problem) throw new TypeError(`Invalid CloudEvent: ${problem}.`);
  lastChecked = event;
  return event;
}
