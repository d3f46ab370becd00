/**
 * The csrapproving controller (kube-controller-manager's certificatesigningrequest-approving-controller,
 * sarapprove): a pending request for `kubernetes.io/kube-apiserver-client-kubelet` that is a node
 * client certificate request is approved when its requester may `create` the
 * `certificatesigningrequests/selfnodeclient` subresource (renewing its own certificate: the
 * requester is the CN) or `certificatesigningrequests/nodeclient` (a new node, by bootstrap token),
 * as a SubjectAccessReview for the requester recorded in the spec answers. Nothing else is decided
 * here: other requests wait for an administrator (`kubectl certificate approve`).
 */
import type { KubeObject } from '../api/meta.js';
import { timestamp } from '../registry/generic/meta.js';
import { CertificatesGroup, hasCondition, parsedRequest } from '../registry/kinds/certificate-signing-request.js';
import { arr, obj, spec, status, str } from '../registry/kinds/common.js';
import type { ApiClient } from '../client/interface.js';
import { served, splitKey, type ControllerContext, type Served } from '../controllers/context.js';
import { startReconciler } from '../controllers/reconciler.js';
import { SystemContext, type Controller, type ControllerOptions } from '../controllers/shared.js';
import { KubeletClient, kubeletClientRefusal } from './signers.js';

export const ApprovingControllerName = 'certificatesigningrequest-approving-controller';

/** What may approve a node client request, in the order kube-controller-manager asks. */
const Recognizers = [
  { subresource: 'selfnodeclient', self: true, message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
  { subresource: 'nodeclient', self: false, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
];

const pending = (o: KubeObject): boolean =>
  str(spec(o).signerName) === KubeletClient && !hasCondition(o, 'Approved') && !hasCondition(o, 'Denied') && !str(status(o).certificate);

/** Whether the requester recorded in `o` may `create` certificatesigningrequests/<subresource>. */
async function requesterMay(registry: ApiClient, o: KubeObject, subresource: string): Promise<boolean> {
  const reviews = registry.find('authorization.k8s.io', 'v1', 'subjectaccessreviews');
  if (!reviews) return false;
  const s = spec(o);
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: {
      user: str(s.username), uid: str(s.uid), groups: arr(s.groups).map(str), ...(s.extra ? { extra: s.extra } : {}),
      resourceAttributes: { group: CertificatesGroup, resource: 'certificatesigningrequests', subresource, verb: 'create', version: '*' },
    },
  };
  const { object } = await reviews.create(SystemContext, review);
  return obj(object.status).allowed === true;
}

/** The message of the approval `o` earns, or undefined when it earns none. */
export async function approvalFor(registry: ApiClient, o: KubeObject): Promise<string | undefined> {
  const csr = parsedRequest(o);
  if (!pending(o) || !csr || kubeletClientRefusal(csr, arr(spec(o).usages).map(str))) return undefined;
  for (const r of Recognizers) {
    if (r.self && csr.commonName !== str(spec(o).username)) continue;
    if (await requesterMay(registry, o, r.subresource)) return r.message;
  }
  return undefined;
}

async function syncOne(registry: ApiClient, csrs: Served, key: string): Promise<void> {
  const o = csrs.cache.get('', splitKey(key).name);
  if (!o) return;
  const message = await approvalFor(registry, o);
  if (!message) return;
  const at = timestamp();
  const approved = { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: at, lastTransitionTime: at };
  const next = { ...o, status: { ...obj(o.status), conditions: [...arr(status(o).conditions), approved] } };
  const { object } = await csrs.store.update(SystemContext, o.metadata.name!, next, 'approval');
  csrs.cache.observe(object);
}

export function startCsrApproving(ctx: ControllerContext, opts: ControllerOptions = {}): Controller {
  const csrs = served(ctx, CertificatesGroup, 'v1', 'certificatesigningrequests');
  if (!csrs) return { stop: async () => undefined };
  return startReconciler(ApprovingControllerName, (key) => syncOne(ctx.client, csrs, key), [{ cache: csrs.cache, keys: (o, _old, type) => (type !== 'DELETED' && pending(o) ? [`/${o.metadata.name}`] : []) }], { log: opts.log });
}
