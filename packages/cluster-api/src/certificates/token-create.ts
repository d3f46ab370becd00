/**
 * `cluster-api token create`, as `kubeadm token create`: a new bootstrap token stored as its Secret in
 * kube-system through the caller's kubeconfig (an administrator's), printed on stdout; optionally a
 * bootstrap kubeconfig (the server and CA of the caller's, the token as credentials, mode 0600) for
 * `cluster-api node --bootstrap-kubeconfig`.
 */
import { KubeClient, Resources } from '@func/kube-client';
import { ExtraGroupPattern, bootstrapTokenSecret, newBootstrapToken } from '../auth/bootstrap-tokens.js';
import { writeKubeconfig } from '../auth/credentials.js';
import { GoDuration, goDurationMs } from '../registry/kinds/cron.js';

export class TokenCreateError extends Error {
  override readonly name = 'TokenCreateError';
}

export interface TokenCreate {
  kubeconfig?: string;
  context?: string;
  /** A Go duration (`24h`, `1h30m`); `0`: never expires. */
  ttl: string;
  description?: string;
  groups?: readonly string[];
  /** Where to write a bootstrap kubeconfig holding the token. */
  bootstrapKubeconfigOut?: string;
}

export async function createBootstrapToken(req: TokenCreate): Promise<string> {
  if (req.ttl !== '0' && (!GoDuration.test(req.ttl) || req.ttl.startsWith('-')))
    throw new TokenCreateError(`--ttl must be a duration such as 24h or 30m (0: never expires), got ${JSON.stringify(req.ttl)}`);
  const bad = (req.groups ?? []).find((g) => !ExtraGroupPattern.test(g));
  if (bad !== undefined) throw new TokenCreateError(`--groups: ${JSON.stringify(bad)} must match ${ExtraGroupPattern.source}`);
  const token = newBootstrapToken();
  const admin = KubeClient.fromKubeconfig({ kubeconfig: req.kubeconfig, context: req.context });
  try {
    const secret = bootstrapTokenSecret(token, { ttlMs: req.ttl === '0' ? 0 : goDurationMs(req.ttl), description: req.description, ...(req.groups?.length ? { groups: req.groups } : {}) });
    await admin.create(Resources.secrets, secret, { namespace: 'kube-system' });
    if (req.bootstrapKubeconfigOut)
      writeKubeconfig(req.bootstrapKubeconfigOut, { server: admin.connection.server, ca: admin.connection.ca?.toString(), token, name: 'cluster-api' });
    return token;
  } finally {
    admin.close();
  }
}
