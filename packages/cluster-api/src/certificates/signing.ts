/**
 * The csrsigning controller (kube-controller-manager's certificatesigningrequest-signing-controller):
 * an approved request for a built-in signer, not denied, not failed and not yet issued, is signed by
 * the cluster CA and its certificate written through `status`; one that breaks its signer's rules
 * (signers.ts) gets a Failed condition, reason SignerValidationFailure, instead. Requests for other
 * signers are left to whoever signs for them.
 */
import type { KubeObject } from '../api/meta.js';
import { timestamp } from '../registry/generic/meta.js';
import { CertificatesGroup, hasCondition, parsedRequest } from '../registry/kinds/certificate-signing-request.js';
import { arr, obj, spec, status, str } from '../registry/kinds/common.js';
import { served, splitKey, writeStatus, type ControllerContext, type Served } from '../controllers/context.js';
import { startReconciler } from '../controllers/reconciler.js';
import type { Controller, ControllerOptions } from '../controllers/shared.js';
import { BuiltInSigners, sign, signerRefusal } from './signers.js';
import type { CertificateAuthorityKeys } from './x509.js';

export const SigningControllerName = 'certificatesigningrequest-signing-controller';

/** Whether this controller has anything to do for `o`. */
const waitsForSignature = (o: KubeObject): boolean =>
  BuiltInSigners.includes(str(spec(o).signerName)) && hasCondition(o, 'Approved') && !hasCondition(o, 'Denied') && !hasCondition(o, 'Failed') && !str(status(o).certificate);

/** The status `o` gets from its signer: the certificate, or a Failed condition saying why not. */
export function signedStatus(o: KubeObject, ca: CertificateAuthorityKeys): Record<string, unknown> {
  const usages = arr(spec(o).usages).map(str);
  const csr = parsedRequest(o);
  const refusal = csr ? signerRefusal(str(spec(o).signerName), csr, usages) : 'unable to parse csr';
  if (!csr || refusal) {
    const failed = { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: refusal, lastUpdateTime: timestamp(), lastTransitionTime: timestamp() };
    return { ...obj(o.status), conditions: [...arr(status(o).conditions), failed] };
  }
  const expiration = spec(o).expirationSeconds;
  const pem = sign(csr, ca, usages, typeof expiration === 'number' ? expiration : undefined);
  return { ...obj(o.status), certificate: Buffer.from(pem).toString('base64') };
}

async function syncOne(csrs: Served, ca: CertificateAuthorityKeys, key: string): Promise<void> {
  const o = csrs.cache.get('', splitKey(key).name);
  if (!o || !waitsForSignature(o)) return;
  await writeStatus(csrs, o, signedStatus(o, ca));
}

export function startCsrSigning(ctx: ControllerContext, ca: CertificateAuthorityKeys | undefined, opts: ControllerOptions = {}): Controller {
  const csrs = served(ctx, CertificatesGroup, 'v1', 'certificatesigningrequests');
  if (!csrs || !ca) return { stop: async () => undefined };
  return startReconciler(SigningControllerName, (key) => syncOne(csrs, ca, key), [{ cache: csrs.cache, keys: (o, _old, type) => (type !== 'DELETED' && waitsForSignature(o) ? [`/${o.metadata.name}`] : []) }], { log: opts.log });
}
