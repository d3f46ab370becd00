/**
 * JSON-shaped objects ↔ protobufjs messages, walking a per-message plan built once from the
 * reflection. Going out, the plain object is encoded as is (protobufjs encoders read plain objects);
 * coming in, the decoded message is read directly, a field counting as present only when it is the
 * message's own property (absent ones sit on the prototype as defaults). Presence is kept both ways, so
 * a stored object round-trips exactly. Empty lists and maps do not exist on the wire, as with Go's
 * `omitempty`.
 */
import type { Field, Type } from 'protobufjs';
import protobuf from 'protobufjs';
import { specialTypes, wireNumber, type SpecialType } from './special.js';

type Json = Record<string, unknown>;

/**
 * Go embedded structs: JSON flattens them into the parent, protobuf nests them under a field of their
 * own (`Volume{name, volumeSource}` is `{"name", "emptyDir"}` in JSON).
 */
const inlined = new Set([
  'Volume.volumeSource',
  'IngressRule.ingressRuleValue',
  'PersistentVolumeSpec.persistentVolumeSource',
  'Probe.handler',
  'EphemeralContainer.ephemeralContainerCommon',
]);

/** Whether `field` of `type` is a Go embedded struct (its fields sit in the parent's JSON). */
export const isInlined = (type: Type, field: Field): boolean =>
  field.resolvedType instanceof protobuf.Type && (field.name === 'localObjectReference' || inlined.has(`${type.name}.${field.name}`));

interface Slot {
  name: string;
  repeated: boolean;
  map: boolean;
  /** The nested message, when the field (or the map's value) is one. */
  nested?: Type;
  special?: SpecialType;
  inline: boolean;
  /** protobuf scalar type name ('string', 'int64', 'bytes', …) when not a message. */
  scalar: string;
}

const plans = new WeakMap<Type, Slot[]>();

function planOf(type: Type): Slot[] {
  let plan = plans.get(type);
  if (plan) return plan;
  plan = type.fieldsArray.map((field: Field): Slot => {
    const nested = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    return {
      name: field.name,
      repeated: field.repeated,
      map: field.map,
      nested,
      special: nested && specialTypes.get(nested.fullName),
      inline: isInlined(type, field),
      scalar: field.type,
    };
  });
  plans.set(type, plan);
  return plan;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `obj[key] = value` that stays an own property for every key, "__proto__" included (as JSON.parse makes it). */
function setKey(obj: Json, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/* ---- JSON → the plain object protobufjs encodes ---- */

export function toWire(type: Type, json: Json): Json {
  const out: Json = {};
  for (const slot of planOf(type)) {
    if (slot.inline) {
      const inner = toWire(slot.nested!, json);
      for (const _ in inner) {
        out[slot.name] = inner;
        break;
      }
      continue;
    }
    const value = json[slot.name];
    if (value === undefined || value === null) continue;
    out[slot.name] = fieldToWire(slot, value);
  }
  return out;
}

function fieldToWire(slot: Slot, value: unknown): unknown {
  if (slot.map) {
    const out: Json = {};
    if (isObject(value)) for (const key of Object.keys(value)) if (value[key] !== null && value[key] !== undefined) setKey(out, key, valueToWire(slot, value[key]));
    return out;
  }
  if (slot.repeated) return (Array.isArray(value) ? value : [value]).filter((v) => v !== null).map((v) => valueToWire(slot, v));
  return valueToWire(slot, value);
}

/** Scalars are coerced to the field's type: the encoders write what they are given without checking. */
function valueToWire(slot: Slot, value: unknown): unknown {
  if (slot.special) return slot.special.toWire(value);
  if (slot.nested) return toWire(slot.nested, isObject(value) ? value : {});
  switch (slot.scalar) {
    case 'string':
    case 'bytes':
      return typeof value === 'string' ? value : String(value);
    case 'bool':
      return Boolean(value);
    default:
      return Number.isFinite(Number(value)) ? Number(value) : 0;
  }
}

/* ---- decoded message → JSON ---- */

const has = (message: object, name: string): boolean => Object.prototype.hasOwnProperty.call(message, name);

/**
 * Messages whose string fields are all Go non-pointer strings with `omitempty`: Go clients write them
 * on the wire even when empty (kubectl sends `generateName: ""` and `selfLink: ""`), and Go's JSON
 * leaves them out, so an empty one decodes as absent.
 */
const emptyStringIsAbsent = new Set(['.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta', '.k8s.io.apimachinery.pkg.apis.meta.v1.ListMeta']);

export function fromWire(type: Type, message: object): Json {
  const out: Json = {};
  const fields = message as Json;
  const dropEmpty = emptyStringIsAbsent.has(type.fullName);
  for (const slot of planOf(type)) {
    if (!has(message, slot.name) || fields[slot.name] === null) continue;
    const value = fields[slot.name];
    if (dropEmpty && value === '' && slot.scalar === 'string') continue;
    if (slot.inline) {
      Object.assign(out, fromWire(slot.nested!, value as object));
      continue;
    }
    const json = fieldFromWire(slot, value);
    if (json !== undefined) out[slot.name] = json;
  }
  return out;
}

function fieldFromWire(slot: Slot, value: unknown): unknown {
  if (slot.map) {
    const entries = value as Json;
    let out: Json | undefined;
    // A map entry without a value decodes to the type's zero value, as Go's unmarshaller does. Own keys
    // only: a key of "__proto__" must not reach a prototype, on the decoder's object or on ours.
    for (const key of Object.keys(entries)) setKey((out ??= {}), key, valueFromWire(slot, entries[key] ?? (slot.nested ? {} : '')));
    return out;
  }
  if (slot.repeated) {
    const items = value as unknown[];
    return items.length ? items.map((v) => valueFromWire(slot, v)) : undefined;
  }
  return valueFromWire(slot, value);
}

function valueFromWire(slot: Slot, value: unknown): unknown {
  if (slot.special) return slot.special.fromWire(value as Json);
  if (slot.nested) return fromWire(slot.nested, value as object);
  if (slot.scalar === 'bytes') return typeof value === 'string' ? value : Buffer.from(value as Uint8Array).toString('base64');
  if (slot.scalar === 'string' || slot.scalar === 'bool') return value;
  return wireNumber(value);
}
