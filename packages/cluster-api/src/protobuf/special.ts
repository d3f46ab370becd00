/**
 * Kubernetes types whose JSON form is not their message shape: Time and MicroTime (RFC 3339 string ↔
 * {seconds, nanos}), Quantity (string ↔ {string}), IntOrString (number | string ↔ {type, intVal,
 * strVal}), FieldsV1 and RawExtension (embedded JSON ↔ bytes), ExtraValue (a Go `[]string` type: a JSON
 * list ↔ {items}). Keyed by the message's full name; each says, as an OpenAPI schema, what its JSON is.
 */
import { malformedBody } from '../api/errors.js';

export interface SpecialType {
  /** JSON value → the plain object protobufjs encodes. */
  toWire(value: unknown): Record<string, unknown>;
  /** Decoded message → JSON value; undefined leaves the field out (Go's zero Time marshals as null). */
  fromWire(wire: Record<string, unknown>): unknown;
  /** The OpenAPI schema of its JSON form (what Go's JSON makes of it), served instead of the message's. */
  schema: Readonly<Record<string, unknown>>;
}

const DateTime = { type: 'string', format: 'date-time' };

/** A decoded integer as a number: int64 fields decode as Long objects when long.js is installed. */
export function wireNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && 'toNumber' in value) return (value as { toNumber(): number }).toNumber();
  return Number(value ?? 0);
}

const rfc3339 = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

function timeToWire(value: unknown): Record<string, unknown> {
  const m = typeof value === 'string' ? rfc3339.exec(value) : null;
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
  if (!m || Number.isNaN(ms)) throw malformedBody(`time ${JSON.stringify(value)?.slice(0, 40)} is not RFC 3339`);
  const nanos = Number((m[2] ?? '').padEnd(9, '0'));
  return nanos ? { seconds: ms / 1000, nanos } : { seconds: ms / 1000 };
}

/** Seconds since the epoch as `YYYY-MM-DDTHH:MM:SS`, refusing what JavaScript dates cannot hold. */
function secondsToIso(seconds: unknown): string {
  const s = wireNumber(seconds);
  const date = new Date(s * 1000);
  if (!Number.isSafeInteger(s) || Number.isNaN(date.getTime())) throw malformedBody('time out of range');
  return date.toISOString().slice(0, 19);
}

const nanosOf = (wire: Record<string, unknown>): number => {
  const n = wireNumber(wire.nanos);
  if (!Number.isInteger(n) || n < 0 || n > 999_999_999) throw malformedBody('time nanos out of range');
  return n;
};

/** metav1.Time marshals to whole seconds; a fraction is kept only if the sender had one. */
const time: SpecialType = {
  schema: DateTime,
  toWire: timeToWire,
  fromWire(wire) {
    const nanos = nanosOf(wire);
    if (!wireNumber(wire.seconds) && !nanos) return undefined;
    const fraction = nanos ? `.${String(nanos).padStart(9, '0').replace(/0+$/, '')}` : '';
    return `${secondsToIso(wire.seconds)}${fraction}Z`;
  },
};

/** metav1.MicroTime marshals with exactly six fractional digits. */
const microTime: SpecialType = {
  schema: DateTime,
  toWire: timeToWire,
  fromWire(wire) {
    const nanos = nanosOf(wire);
    if (!wireNumber(wire.seconds) && !nanos) return undefined;
    return `${secondsToIso(wire.seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
  },
};

const quantity: SpecialType = {
  schema: { type: 'string' },
  toWire: (value) => ({ string: String(value) }),
  fromWire: (wire) => String(wire.string ?? '0'),
};

const IntOrStringString = 1;

/**
 * Go writes every IntOrString field, set or not (they are non-pointer structs: ServicePort.targetPort,
 * probe ports), so the zero value `{type: 0, intVal: 0}` means unset, which Kubernetes' defaulting then
 * fills (targetPort = port). It is left out, as an unset field.
 */
const intOrString: SpecialType = {
  // How OpenAPI v3 says "an integer or a string"; kubectl explain shows it as <IntOrString>.
  schema: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
  toWire: (value) => (typeof value === 'string' ? { type: IntOrStringString, strVal: value } : { type: 0, intVal: Number(value) }),
  fromWire(wire) {
    if (wireNumber(wire.type) === IntOrStringString) return String(wire.strVal ?? '');
    const n = wireNumber(wire.intVal);
    return n === 0 ? undefined : n;
  },
};

/** Bytes holding JSON (FieldsV1.Raw, RawExtension.raw); protobufjs encoders take base64 strings for bytes. */
function embeddedJson(field: string): SpecialType {
  return {
    schema: { type: 'object' },
    toWire: (value) => ({ [field]: Buffer.from(JSON.stringify(value)).toString('base64') }),
    fromWire(wire) {
      const raw = wire[field];
      const text = raw instanceof Uint8Array ? Buffer.from(raw).toString('utf8') : '';
      if (!text) return undefined;
      try {
        return JSON.parse(text);
      } catch {
        throw malformedBody(`${field} does not hold JSON`);
      }
    },
  };
}

/** A named Go slice type (`type ExtraValue []string`): a plain list in JSON, `{items}` on the wire. */
const stringList: SpecialType = {
  schema: { type: 'array', items: { type: 'string' } },
  toWire: (value) => ({ items: (Array.isArray(value) ? value : [value]).filter((v) => v !== null && v !== undefined).map(String) }),
  fromWire: (wire) => (Array.isArray(wire.items) ? wire.items : []),
};

export const specialTypes: ReadonlyMap<string, SpecialType> = new Map([
  ['.k8s.io.apimachinery.pkg.apis.meta.v1.Time', time],
  ['.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime', microTime],
  ['.k8s.io.apimachinery.pkg.api.resource.Quantity', quantity],
  ['.k8s.io.apimachinery.pkg.util.intstr.IntOrString', intOrString],
  ['.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1', embeddedJson('Raw')],
  ['.k8s.io.apimachinery.pkg.runtime.RawExtension', embeddedJson('raw')],
  ['.k8s.io.api.authentication.v1.ExtraValue', stringList],
  ['.k8s.io.api.authorization.v1.ExtraValue', stringList],
  ['.k8s.io.api.certificates.v1.ExtraValue', stringList],
]);
