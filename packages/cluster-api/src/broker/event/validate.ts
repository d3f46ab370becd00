/**
 * CloudEvents 1.0 context-attribute rules (spec §3), checked on every event the broker accepts and on
 * every reply it re-enqueues. The reason returned is what a 400 tells the sender, so it names the
 * attribute and the rule and never echoes more than a short prefix of the offending value.
 */
import type { AttributeValue } from './event.js';

const NAME = /^[a-z0-9]+$/;
/** RFC 3339 `date-time`; the ranges are checked below. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;
/** RFC 2046 `type/subtype` with optional parameters, loosely: tokens around one slash. */
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/;
/** A URI-reference: printable ASCII without spaces, `%` only as an escape. */
const URI_REFERENCE = /^(?:[\x21-\x24\x26-\x7e]|%[0-9A-Fa-f]{2})+$/;
const URI_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
const MAX_NAME = 64;

const STRING_ATTRIBUTES = ['specversion', 'id', 'source', 'type', 'datacontenttype', 'dataschema', 'subject', 'time'] as const;

function shown(v: string): string {
  return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
}

export function isRfc3339(v: string): boolean {
  const m = RFC3339.exec(v);
  if (!m) return false;
  const [month, day, hour, minute, second] = [m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return false;
  return m[10] === undefined || (Number(m[10]) <= 23 && Number(m[11]) <= 59);
}

function checkString(name: string, v: string): string | undefined {
  switch (name) {
    case 'specversion':
      return v === '1.0' ? undefined : `specversion ${shown(v)} is not supported (expected "1.0")`;
    case 'source':
      return URI_REFERENCE.test(v) ? undefined : `source ${shown(v)} is not a URI-reference`;
    case 'dataschema':
      return URI_REFERENCE.test(v) && URI_SCHEME.test(v) ? undefined : `dataschema ${shown(v)} is not an absolute URI`;
    case 'time':
      return isRfc3339(v) ? undefined : `time ${shown(v)} is not an RFC 3339 timestamp`;
    case 'datacontenttype':
      return MEDIA_TYPE.test(v) ? undefined : `datacontenttype ${shown(v)} is not a media type`;
    default:
      return undefined;
  }
}

function checkValue(name: string, v: AttributeValue): string | undefined {
  if (typeof v === 'string') {
    if (v === '' && name !== 'specversion') return STRING_ATTRIBUTES.includes(name as never) ? `${name} must not be empty` : undefined;
    return checkString(name, v);
  }
  if (STRING_ATTRIBUTES.includes(name as never)) return `${name} must be a string`;
  if (typeof v === 'number' && !(Number.isInteger(v) && v >= -2147483648 && v <= 2147483647))
    return `extension ${name} is not a 32-bit integer`;
  return undefined;
}

/**
 * The first rule `attributes` breaks, or undefined for a valid event: id, source, specversion and
 * type required and well formed, optional attributes well formed when present, names lower-case
 * alphanumeric, extension values String, Integer or Boolean.
 */
export function invalidEvent(attributes: Readonly<Record<string, unknown>>): string | undefined {
  for (const required of ['specversion', 'id', 'source', 'type']) {
    if (attributes[required] === undefined) return `missing required attribute ${required}`;
  }
  for (const [name, v] of Object.entries(attributes)) {
    if (!NAME.test(name) || name.length > MAX_NAME) return `attribute name ${shown(name)} is not lower-case letters and digits (at most ${MAX_NAME})`;
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') return `attribute ${name} must be a string, an integer or a boolean`;
    const why = checkValue(name, v);
    if (why) return why;
  }
  return undefined;
}
