/**
 * Secret: `stringData` is merged into base64 `data` (and dropped) before anything else sees it, as the
 * v1 conversion does; values must be base64 and total < 1 MiB (Kubernetes' MaxSecretSize).
 */
import type { KubeObject } from '../../api/meta.js';
import { forbiddenField, immutable, invalidValue, required, tooLong, type FieldError } from '../generic/validation.js';
import { AllVerbs, Base64, column, core, obj, setDefault, str, type Obj } from './common.js';
import { fillServiceAccountToken } from './service-account-token-secret.js';

export const MaxSecretSize = 1024 * 1024;
const KeyPattern = /^[-._a-zA-Z0-9]+$/;
const KeyMessage = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** Keys a secret of a well-known type must hold. */
const RequiredKeys: Readonly<Record<string, readonly string[]>> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

const mergeStringData = (o: KubeObject): void => {
  const data: Obj = { ...obj(o.data) };
  for (const [k, v] of Object.entries(obj(o.stringData))) data[k] = Buffer.from(String(v)).toString('base64');
  delete o.stringData;
  if (Object.keys(data).length || o.data !== undefined) o.data = data;
};

const validate = (o: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(obj(o.data))) {
    if (!KeyPattern.test(k)) errs.push(invalidValue('data', k, KeyMessage));
    if (typeof v !== 'string' || !Base64.test(v)) errs.push(invalidValue(`data[${k}]`, '<secret contents redacted>', 'must be base64-encoded'));
    else size += Buffer.from(v, 'base64').length;
  }
  if (size > MaxSecretSize) errs.push(tooLong('data', MaxSecretSize));
  for (const k of RequiredKeys[str(o.type)] ?? []) if (!(k in obj(o.data))) errs.push(required(`data[${k}]`));
  if (o.type === 'kubernetes.io/service-account-token' && !o.metadata.annotations?.['kubernetes.io/service-account.name']) {
    errs.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
  }
  return errs;
};

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  if (o.type !== old.type) errs.push(immutable('type', o.type));
  if (old.immutable === true) {
    if (JSON.stringify(o.data ?? {}) !== JSON.stringify(old.data ?? {})) errs.push(forbiddenField('data', 'field is immutable when `immutable` is set'));
    if (o.immutable !== true) errs.push(forbiddenField('immutable', 'field is immutable when `immutable` is set'));
  }
  return errs;
};

export const secret = core({
  kind: 'Secret',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  verbs: AllVerbs,
  fields: ['data', 'stringData', 'type', 'immutable'],
  strategy: {
    prepareForCreate(o) {
      mergeStringData(o);
      setDefault(o as Obj, 'type', 'Opaque');
    },
    prepareForUpdate(o) {
      mergeStringData(o);
      setDefault(o as Obj, 'type', 'Opaque');
    },
    validate,
    validateUpdate,
    fieldsOf: (o) => ({ type: str(o.type) }),
  },
  hooks: { afterCreate: fillServiceAccountToken },
  columns: [column('Type', (o) => str(o.type)), column('Data', (o) => Object.keys(obj(o.data)).length, { type: 'integer' })],
});
