/**
 * Long-lived service account tokens in Secrets, as Kubernetes' token controller fills them: a Secret
 * of type `kubernetes.io/service-account-token` naming an existing account in its
 * `kubernetes.io/service-account.name` annotation gets `data.token` (a token bound to that Secret, so
 * deleting the Secret revokes it), `data.namespace`, `data["ca.crt"]` (the CA that verifies this server,
 * when it has one: with the token, all a client needs) and the account's uid annotation. Filled right
 * after the create, as the controller does it, in a second write; a Secret that already holds a token,
 * or names an account that does not exist, is left as created.
 */
import type { Services } from '../definition.js';
import type { RequestContext, Written } from '../rest.js';
import { isApiError } from '../../api/errors.js';
import { isObject } from '../generic/meta.js';

export const ServiceAccountTokenType = 'kubernetes.io/service-account-token';
const AccountName = 'kubernetes.io/service-account.name';
const AccountUid = 'kubernetes.io/service-account.uid';
/** Legacy tokens never expire in Kubernetes; these live as long as their Secret, for at most ten years. */
const TenYears = 10 * 365 * 24 * 3600;

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** The Secret's afterCreate hook: the token controller's work, in a write right after the create. */
export const fillServiceAccountToken = async (created: Written, ctx: RequestContext, services: Services): Promise<Written | void> => {
  const secret = created.object;
  const accountName = secret.metadata.annotations?.[AccountName];
  const data = isObject(secret.data) ? secret.data : {};
  if (!services.tokens || secret.type !== ServiceAccountTokenType || !accountName || data.token !== undefined) return;
  const account = await services.find('', 'v1', 'serviceaccounts')!.get(ctx, accountName).catch((err: unknown) => {
    if (isApiError(err) && err.code === 404) return undefined;
    throw err;
  });
  if (!account) return;
  const namespace = secret.metadata.namespace ?? '';
  const { token } = services.tokens.issue({ namespace, name: accountName, uid: account.metadata.uid ?? '' }, [], TenYears, {
    kind: 'Secret',
    name: secret.metadata.name ?? '',
    uid: secret.metadata.uid ?? '',
  });
  return services.find('', 'v1', 'secrets')!.patch(ctx, secret.metadata.name ?? '', 'merge', {
    metadata: { annotations: { [AccountUid]: account.metadata.uid } },
    data: { token: b64(token), namespace: b64(namespace), ...(services.rootCa && { 'ca.crt': b64(services.rootCa) }) },
  });
};
