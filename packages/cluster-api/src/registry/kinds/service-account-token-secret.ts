/**
 * Long-lived service account tokens in Secrets, as Kubernetes' token controller fills them: a Secret
 * of type `kubernetes.io/service-account-token` naming an existing account in its
 * `kubernetes.io/service-account.name` annotation gets `data.token` (a token bound to that Secret, so
 * deleting the Secret revokes it), `data.namespace`, `data["ca.crt"]` (the CA that verifies this server,
 * when it has one: with the token, all a client needs) and the account's uid annotation. Filled right
 * after the create, as the controller does it, in a second write; a Secret that already holds a token,
 * or names an account that does not exist, is left as created.
 */
import type { KubeObject } from '../../api/meta.js';
import type { RequestContext, ResourceStore, TokenIssuer } from '../definition.js';
import { isApiError } from '../../api/errors.js';
import { isObject } from '../generic/meta.js';

export const ServiceAccountTokenType = 'kubernetes.io/service-account-token';
const AccountName = 'kubernetes.io/service-account.name';
const AccountUid = 'kubernetes.io/service-account.uid';
/** Legacy tokens never expire in Kubernetes; these live as long as their Secret, for at most ten years. */
const TenYears = 10 * 365 * 24 * 3600;

const b64 = (s: string): string => Buffer.from(s).toString('base64');

export const withServiceAccountTokenSecrets = (
  secrets: ResourceStore,
  serviceAccounts: ResourceStore,
  issuer: TokenIssuer,
  rootCa?: string,
): ResourceStore => {
  const create = async (ctx: RequestContext, body: unknown): Promise<KubeObject> => {
    const secret = await secrets.create(ctx, body);
    const accountName = secret.metadata.annotations?.[AccountName];
    const data = isObject(secret.data) ? secret.data : {};
    if (ctx.dryRun || secret.type !== ServiceAccountTokenType || !accountName || data.token !== undefined) return secret;
    const account = await serviceAccounts.get(ctx, accountName).catch((err: unknown) => {
      if (isApiError(err) && err.code === 404) return undefined;
      throw err;
    });
    if (!account) return secret;
    const namespace = secret.metadata.namespace ?? '';
    const { token } = issuer.issue({ namespace, name: accountName, uid: account.metadata.uid ?? '' }, [], TenYears, {
      kind: 'Secret',
      name: secret.metadata.name ?? '',
      uid: secret.metadata.uid ?? '',
    });
    return secrets.patch(ctx, secret.metadata.name ?? '', 'merge', {
      metadata: { annotations: { [AccountUid]: account.metadata.uid } },
      data: { token: b64(token), namespace: b64(namespace), ...(rootCa && { 'ca.crt': b64(rootCa) }) },
    });
  };
  return Object.assign(Object.create(secrets) as ResourceStore, { create });
};
