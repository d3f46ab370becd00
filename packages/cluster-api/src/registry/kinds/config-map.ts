/**
 * ConfigMap (core/v1): `data` (strings) and `binaryData` (base64), keys valid config keys and never in
 * both, at most 1 MiB together (MaxConfigMapSize: "Too long: must have at most 1048576 bytes");
 * `immutable: true` freezes both maps and the flag itself (ValidateConfigMapUpdate).
 */
import type { KubeObject } from '../../api/meta.js';
import { isDeepStrictEqual } from 'node:util';
import { duplicate, forbiddenField, invalidValue, tooLong, type FieldError } from '../generic/validation.js';
import { AllVerbs, Base64, column, core, obj } from './common.js';

export const MaxConfigMapSize = 1024 * 1024;
const KeyPattern = /^[-._a-zA-Z0-9]+$/;
const KeyMessage = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** IsConfigMapKey. */
const keyErrors = (key: string, at: string): FieldError[] => {
  if (key.length > 253) return [invalidValue(at, key, 'must be no more than 253 characters')];
  if (!KeyPattern.test(key)) return [invalidValue(at, key, KeyMessage)];
  if (key === '.' || key === '..' || key.startsWith('..')) return [invalidValue(at, key, key === '.' ? "must not be '.'" : key === '..' ? "must not be '..'" : "must not start with '..'")];
  return [];
};

const validate = (o: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(obj(o.data))) {
    errs.push(...keyErrors(k, 'data'));
    if (typeof v !== 'string') errs.push(invalidValue(`data[${k}]`, v, 'must be a string'));
    else size += Buffer.byteLength(v);
  }
  for (const [k, v] of Object.entries(obj(o.binaryData))) {
    errs.push(...keyErrors(k, 'binaryData'));
    if (Object.hasOwn(obj(o.data), k)) errs.push(duplicate('data', k));
    if (typeof v !== 'string' || !Base64.test(v)) errs.push(invalidValue(`binaryData[${k}]`, '<binary data>', 'must be base64-encoded'));
    else size += Buffer.from(v, 'base64').length;
  }
  if (size > MaxConfigMapSize) errs.push(tooLong('', MaxConfigMapSize));
  return errs;
};

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (o.immutable !== true) errs.push(forbiddenField('immutable', 'field is immutable when `immutable` is set'));
  if (!isDeepStrictEqual(o.data ?? {}, old.data ?? {})) errs.push(forbiddenField('data', 'field is immutable when `immutable` is set'));
  if (!isDeepStrictEqual(o.binaryData ?? {}, old.binaryData ?? {})) errs.push(forbiddenField('binaryData', 'field is immutable when `immutable` is set'));
  return errs;
};

export const configMap = core({
  kind: 'ConfigMap',
  plural: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['cm'],
  fields: ['data', 'binaryData', 'immutable'],
  strategy: { validate, validateUpdate, generationChanged: () => false },
  columns: [column('Data', (o) => Object.keys(obj(o.data)).length + Object.keys(obj(o.binaryData)).length, { type: 'integer', description: 'Data contains the configuration data. Each key must consist of alphanumeric characters, \'-\', \'_\' or \'.\'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.' })],
});
