/**
 * The CSR cleaner (kube-controller-manager's certificatesigningrequest-cleaner-controller): requests
 * are removed once done with, looked at hourly and after every change, by Kubernetes' rules: issued, denied or failed an hour
 * after that happened (the condition's lastUpdateTime), pending a day after creation, and any whose
 * issued certificate has expired.
 */
import { X509Certificate } from 'node:crypto';
import { isApiError } from '../api/errors.js';
import type { KubeObject } from '../api/meta.js';
import { CertificatesGroup, conditions } from '../registry/kinds/certificate-signing-request.js';
import { status, str } from '../registry/kinds/common.js';
import { served, type ControllerContext } from '../controllers/context.js';
import { startSingleton } from '../controllers/reconciler.js';
import { SystemContext, type Controller, type ControllerOptions } from '../controllers/shared.js';

export const CleanerControllerName = 'certificatesigningrequest-cleaner-controller';

const HourMs = 3600_000;
const PendingMs = 24 * HourMs;

const conditionTime = (o: KubeObject, type: string): number | undefined => {
  const c = conditions(o).find((x) => x.type === type);
  const at = c && Date.parse(str(c.lastUpdateTime) || str(c.lastTransitionTime));
  return c ? (Number.isNaN(at) ? 0 : (at as number)) : undefined;
};

function certificateEnd(o: KubeObject): number | undefined {
  const pem = str(status(o).certificate);
  if (!pem) return undefined;
  try {
    return Date.parse(new X509Certificate(Buffer.from(pem, 'base64')).validTo);
  } catch {
    return undefined;
  }
}

/** Why `o` is due for removal at `now`, or undefined while it is kept. */
export function staleReason(o: KubeObject, now: number): string | undefined {
  const end = certificateEnd(o);
  if (end !== undefined && end < now) return 'its certificate has expired';
  const approved = conditionTime(o, 'Approved');
  if (approved !== undefined && str(status(o).certificate) && approved + HourMs < now) return 'issued more than an hour ago';
  for (const type of ['Denied', 'Failed']) {
    const at = conditionTime(o, type);
    if (at !== undefined && at + HourMs < now) return `${type.toLowerCase()} more than an hour ago`;
  }
  const created = Date.parse(o.metadata.creationTimestamp ?? '');
  if (conditions(o).length === 0 && created + PendingMs < now) return 'pending for more than a day';
  return undefined;
}

export function startCsrCleaner(ctx: ControllerContext, opts: ControllerOptions = {}): Controller {
  const csrs = served(ctx, CertificatesGroup, 'v1', 'certificatesigningrequests');
  if (!csrs) return { stop: async () => undefined };
  const pass = startSingleton(CleanerControllerName, async () => {
    const now = Date.now();
    for (const o of csrs.cache.list()) {
      const why = staleReason(o, now);
      if (!why) continue;
      await csrs.store.delete(SystemContext, o.metadata.name!, { preconditions: { uid: o.metadata.uid } }).catch((err: unknown) => {
        if (!isApiError(err) || (err.code !== 404 && err.code !== 409)) throw err;
      });
      opts.log?.({ level: 'info', controller: CleanerControllerName, msg: `removed certificate signing request: ${why}`, csr: o.metadata.name });
    }
  }, HourMs, { log: opts.log });
  // Hourly as Kubernetes, and after changes too (a condition may be written with an old time).
  csrs.cache.on(() => pass.kick());
  void csrs.cache.synced.then(() => pass.kick(0));
  return pass;
}
