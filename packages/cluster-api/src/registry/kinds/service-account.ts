/** ServiceAccount: an identity in a namespace with its secrets and image pull secrets. */
import { required, type FieldError } from '../generic/validation.js';
import { token } from '../subresources/token.js';
import { AllVerbs, arr, column, core, obj, str } from './common.js';

const named = (list: unknown, at: string): FieldError[] =>
  arr(list).flatMap((s, i) => (str(obj(s).name) ? [] : [required(`${at}[${i}].name`)]));

export const serviceAccount = core({
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['sa'],
  // POST …/token: a TokenRequest, answered when the server signs tokens.
  subresources: { token },
  fields: ['secrets', 'imagePullSecrets', 'automountServiceAccountToken'],
  strategy: {
    validate: (o) => [...named(o.secrets, 'secrets'), ...named(o.imagePullSecrets, 'imagePullSecrets')],
  },
  columns: [column('Secrets', (o) => arr(o.secrets).length, { type: 'integer' })],
});
