/**
 * JSON-shaped objects ↔ the plain objects protobufjs encodes, walking the message reflection. Field
 * names are the JSON names; presence is kept both ways (a field absent in JSON is absent on the wire
 * and back), so a stored object round-trips exactly. Empty lists and maps do not exist on the wire,
 * as with Kubernetes' `omitempty`.
 */
import type { Field, Type } from 'protobufjs';
import protobuf from 'protobufjs';
import { specialTypes } from './special.js';

type Json = Record<string, unknown>;

/**
 * Go embedded structs: JSON flattens them into the parent, protobuf nests them under a field of their
 * own (`Volume{name, volumeSource}` is `{"name", "emptyDir"}` in JSON).
 */
const inlined = new Set([
  'Volume.volumeSource',
  'PersistentVolumeSpec.persistentVolumeSource',
  'Probe.handler',
  'EphemeralContainer.ephemeralContainerCommon',
]);

const isInline = (type: Type, field: Field): boolean =>
  field.name === 'localObjectReference' || inlined.has(`${type.name}.${field.name}`);

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const messageType = (field: Field): Type | undefined =>
  field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;

/* ---- JSON → wire ---- */

export function toWire(type: Type, json: Json): Json {
  const out: Json = {};
  for (const field of type.fieldsArray) {
    const nested = messageType(field);
    if (nested && isInline(type, field)) {
      const inner = toWire(nested, json);
      if (Object.keys(inner).length) out[field.name] = inner;
      continue;
    }
    const value = json[field.name];
    if (value === undefined || value === null) continue;
    out[field.name] = fieldToWire(field, value);
  }
  return out;
}

function fieldToWire(field: Field, value: unknown): unknown {
  if (field.map) {
    const entries = isObject(value) ? Object.entries(value).filter(([, v]) => v !== null && v !== undefined) : [];
    return Object.fromEntries(entries.map(([k, v]) => [k, valueToWire(field, v)]));
  }
  if (field.repeated) return (Array.isArray(value) ? value : [value]).filter((v) => v !== null).map((v) => valueToWire(field, v));
  return valueToWire(field, value);
}

function valueToWire(field: Field, value: unknown): unknown {
  const nested = messageType(field);
  if (!nested) return value;
  const special = specialTypes.get(nested.fullName);
  if (special) return special.toWire(value);
  return toWire(nested, isObject(value) ? value : {});
}

/* ---- wire → JSON ---- */

export function fromWire(type: Type, wire: Json): Json {
  const out: Json = {};
  for (const field of type.fieldsArray) {
    const value = wire[field.name];
    if (value === undefined || value === null) continue;
    const nested = messageType(field);
    if (nested && isInline(type, field)) {
      Object.assign(out, fromWire(nested, value as Json));
      continue;
    }
    const json = fieldFromWire(field, value);
    if (json !== undefined) out[field.name] = json;
  }
  return out;
}

function fieldFromWire(field: Field, value: unknown): unknown {
  if (field.map) {
    const entries = Object.entries(value as Json).map(([k, v]) => [k, valueFromWire(field, v ?? emptyValue(field))]);
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  if (field.repeated) {
    const items = (value as unknown[]).map((v) => valueFromWire(field, v));
    return items.length ? items : undefined;
  }
  return valueFromWire(field, value);
}

function valueFromWire(field: Field, value: unknown): unknown {
  const nested = messageType(field);
  if (!nested) return value;
  const special = specialTypes.get(nested.fullName);
  return special ? special.fromWire(value as Json) : fromWire(nested, value as Json);
}

/** A map entry without a value decodes to the type's zero value, as Go's unmarshaller does. */
const emptyValue = (field: Field): unknown => (messageType(field) ? {} : '');
