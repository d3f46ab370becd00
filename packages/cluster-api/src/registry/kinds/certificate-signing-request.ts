/**
 * CertificateSigningRequest (certificates.k8s.io/v1, and v1beta1 as the same objects): Kubernetes'
 * certificates strategy and validation. A create records who asked (spec.username, uid, groups,
 * extra) and starts without status; the spec never changes afterwards. Three writers, three ways in:
 * the object itself (metadata only), `approval` (Approved / Denied conditions, for who may `approve`
 * the `signers` resource named by spec.signerName, as the CertificateApproval admission plugin
 * checks), `status` (the certificate and other conditions, for who may `sign` for the signer).
 */
import { isDeepStrictEqual } from 'node:util';
import { forbidden } from '../../api/errors.js';
import type { KubeObject } from '../../api/meta.js';
import { KubeletClient, KubeletServing, LegacyUnknown, kubeletClientRefusal, kubeletServingRefusal } from '../../certificates/signers.js';
import { CsrError, KeyUsages, parseCsr, type ParsedCsr } from '../../certificates/x509.js';
import type { Attributes } from '../authorization.js';
import type { Services, Strategy } from '../definition.js';
import { timestamp } from '../generic/meta.js';
import { duplicate, forbiddenField, invalidValue, isDNS1123Subdomain, notSupported, required, type FieldError } from '../generic/validation.js';
import type { RequestContext } from '../rest.js';
import { statusSubresource } from '../subresources/status.js';
import { servedAt } from '../versions.js';
import { ageColumn, humanDuration, nameColumn } from './columns.js';
import { AllVerbs, arr, Base64, column, inGroup, obj, spec, status, str, type Obj } from './common.js';

export const CertificatesGroup = 'certificates.k8s.io';
const Resource = { group: CertificatesGroup, resource: 'certificatesigningrequests' };

/** The request's PEM from its base64 `spec.request`, or undefined when that is not base64. */
const requestPem = (o: KubeObject): Buffer | undefined => {
  const v = spec(o).request;
  return typeof v === 'string' && Base64.test(v) ? Buffer.from(v, 'base64') : undefined;
};

/** The parsed request of a stored object (valid by construction), or undefined. */
export const parsedRequest = (o: KubeObject): ParsedCsr | undefined => {
  const pem = requestPem(o);
  try {
    return pem && parseCsr(pem);
  } catch {
    return undefined;
  }
};

export const conditions = (o: KubeObject): Obj[] => arr(status(o).conditions).map(obj);
export const hasCondition = (o: KubeObject, type: string): boolean => conditions(o).some((c) => c.type === type && c.status !== 'False');

const SignerPath = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.~:/]*[A-Za-z0-9])?$/;

/** ValidateSignerName: `<fully qualified domain>/<path>`. */
function validateSignerName(v: unknown, field: string): FieldError[] {
  if (typeof v !== 'string' || v === '') return [required(field)];
  const slash = v.indexOf('/');
  if (slash < 0 || !SignerPath.test(v)) return [invalidValue(field, v, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const domain = v.slice(0, slash);
  if (!domain.includes('.')) return [invalidValue(field, v, 'should be a domain with at least two segments separated by dots')];
  return isDNS1123Subdomain(domain).map((m) => invalidValue(field, v, m));
}

const MinExpirationSeconds = 600;

function validateSpec(o: KubeObject, version: 'v1' | 'v1beta1'): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  const pem = requestPem(o);
  if (s.request === undefined || s.request === null || s.request === '') errs.push(required('spec.request'));
  else if (!pem) errs.push(invalidValue('spec.request', '<request data>', 'must be base64-encoded PEM'));
  else {
    try {
      parseCsr(pem);
    } catch (err) {
      errs.push(invalidValue('spec.request', '<request data>', err instanceof CsrError ? err.message : 'cannot be parsed'));
    }
  }
  const usages = s.usages;
  if (version === 'v1' && (!Array.isArray(usages) || usages.length === 0)) errs.push(required('spec.usages'));
  else if (usages !== undefined && !Array.isArray(usages)) errs.push(invalidValue('spec.usages', usages, 'must be a list'));
  const seen = new Set<unknown>();
  arr(usages).forEach((u, i) => {
    if (!KeyUsages.includes(u as string)) errs.push(notSupported(`spec.usages[${i}]`, u, KeyUsages));
    else if (seen.has(u)) errs.push(duplicate(`spec.usages[${i}]`, u));
    seen.add(u);
  });
  errs.push(...validateSignerName(s.signerName, 'spec.signerName'));
  if (version === 'v1' && s.signerName === LegacyUnknown) errs.push(invalidValue('spec.signerName', LegacyUnknown, 'the legacy signerName is not allowed via this API version'));
  const e = s.expirationSeconds;
  if (e !== undefined && e !== null) {
    if (!Number.isInteger(e)) errs.push(invalidValue('spec.expirationSeconds', e, 'must be an integer'));
    else if ((e as number) < MinExpirationSeconds) errs.push(invalidValue('spec.expirationSeconds', e, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  return [...errs, ...validateStatus(o)];
}

const ConditionStatuses = ['True', 'False', 'Unknown'];
const ApprovalTypes = ['Approved', 'Denied'];
const PemCertificate = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END \1-----/g;

function validateCertificate(v: unknown): FieldError[] {
  if (v === undefined || v === null || v === '') return [];
  const field = 'status.certificate';
  if (typeof v !== 'string' || !Base64.test(v)) return [invalidValue(field, '<certificate data>', 'must be base64-encoded PEM')];
  const text = Buffer.from(v, 'base64').toString('latin1');
  const blocks = [...text.matchAll(PemCertificate)];
  if (blocks.length === 0) return [invalidValue(field, '<certificate data>', 'must contain at least one CERTIFICATE PEM block')];
  if (blocks.some((b) => b[1] !== 'CERTIFICATE')) return [invalidValue(field, '<certificate data>', 'only CERTIFICATE PEM blocks are allowed')];
  return [];
}

function validateStatus(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  conditions(o).forEach((c, i) => {
    const at = `status.conditions[${i}]`;
    const type = str(c.type);
    if (!type) errs.push(required(`${at}.type`));
    else if (['Approved', 'Denied', 'Failed'].includes(type) && seen.has(type)) errs.push(duplicate(`${at}.type`, type));
    seen.add(type);
    if (!ConditionStatuses.includes(str(c.status))) errs.push(str(c.status) ? notSupported(`${at}.status`, c.status, ConditionStatuses) : required(`${at}.status`));
    else if (ApprovalTypes.includes(type) && c.status !== 'True') errs.push(notSupported(`${at}.status`, c.status, ['True']));
  });
  if (hasCondition(o, 'Approved') && hasCondition(o, 'Denied')) errs.push(invalidValue('status.conditions', 'Approved', 'Approved and Denied conditions are mutually exclusive'));
  return [...errs, ...validateCertificate(status(o).certificate)];
}

function validateStatusUpdate(o: KubeObject, old: KubeObject): FieldError[] {
  const errs = validateStatus(o);
  for (const type of [...ApprovalTypes, 'Failed']) {
    if (hasCondition(old, type) && !hasCondition(o, type)) errs.push(forbiddenField('status.conditions', `updates may not remove a condition of type "${type}"`));
  }
  const [was, now] = [str(status(old).certificate), str(status(o).certificate)];
  if (was && was !== now) errs.push(forbiddenField('status.certificate', 'updates may not modify existing certificate content'));
  else if (!was && now && !hasCondition(o, 'Approved')) errs.push(forbiddenField('status.certificate', 'updates may not set certificate content unless the Approved condition is present'));
  else if (!was && now && hasCondition(o, 'Failed')) errs.push(forbiddenField('status.certificate', 'updates may not set certificate content if a Failed condition is present'));
  return errs;
}

/** populateConditionTimestamps: a condition that is new or changed gets the current time. */
function stampConditions(o: KubeObject, old?: KubeObject): void {
  const before = old ? conditions(old) : [];
  for (const c of conditions(o)) {
    const prev = before.find((p) => p.type === c.type);
    if (!c.lastUpdateTime) c.lastUpdateTime = timestamp();
    if (!c.lastTransitionTime) c.lastTransitionTime = prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : timestamp();
  }
}

/** The requester, recorded as kube-apiserver records it (spec.username, uid, groups, extra). */
function recordRequester(o: KubeObject, ctx?: RequestContext): void {
  const s = obj(o.spec);
  const user = ctx?.user;
  for (const f of ['username', 'uid', 'groups', 'extra']) delete s[f];
  if (!user) return;
  s.username = user.name;
  if (user.uid) s.uid = user.uid;
  if (user.groups.length) s.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) s.extra = structuredClone(user.extra);
}

const keepSpec = (o: KubeObject, old: KubeObject) => void (o.spec = structuredClone(old.spec));

const strategyFor = (version: 'v1' | 'v1beta1', defaults: (o: KubeObject) => void = () => undefined): Strategy => ({
  prepareForCreate(o, ctx) {
    if (typeof o.spec !== 'object' || o.spec === null) o.spec = {};
    recordRequester(o, ctx);
    defaults(o);
    delete o.status;
  },
  // The object itself changes metadata only: spec is immutable and status has its subresources.
  prepareForUpdate(o, old) {
    keepSpec(o, old);
    if (old.status === undefined) delete o.status;
    else o.status = structuredClone(old.status);
  },
  validate: (o) => validateSpec(o, version),
  validateUpdate: () => [],
  fieldsOf: (o) => ({ 'spec.signerName': str(spec(o).signerName) }),
  generationChanged: () => false,
});

/** Through `status`: the certificate and conditions other than Approved and Denied, which stay as they were. */
const statusStrategy: Strategy = {
  prepareForUpdate(o, old) {
    keepSpec(o, old);
    const kept = conditions(old).filter((c) => ApprovalTypes.includes(str(c.type)));
    const own = conditions(o).filter((c) => !ApprovalTypes.includes(str(c.type)));
    o.status = { ...obj(o.status), conditions: [...kept, ...own] };
    if (!conditions(o).length) delete (o.status as Obj).conditions;
    stampConditions(o, old);
  },
  validateUpdate: validateStatusUpdate,
};

/** Through `approval`: the conditions only; the certificate stays as it was. */
const approvalStrategy: Strategy = {
  prepareForUpdate(o, old) {
    keepSpec(o, old);
    const next: Obj = { ...obj(old.status), conditions: conditions(o) };
    if (!conditions(o).length) delete next.conditions;
    o.status = next;
    stampConditions(o, old);
  },
  validateUpdate: validateStatusUpdate,
};

/** IsAuthorizedForSignerName: `verb` on the signers resource named by the signer, or by its `<domain>/*`. */
function mayUseSigner(services: Services, ctx: RequestContext, verb: string, signerName: string): boolean {
  const authorizer = services.authorizer;
  if (!authorizer || !ctx.user) return true;
  const attrs = (name: string): Attributes => ({
    user: ctx.user!, verb, resourceRequest: true, apiGroup: CertificatesGroup, apiVersion: '*', resource: 'signers', subresource: '', namespace: '', name, path: '',
  });
  const slash = signerName.indexOf('/');
  return authorizer.authorize(attrs(signerName)).decision === 'Allow'
    || (slash > 0 && authorizer.authorize(attrs(`${signerName.slice(0, slash)}/*`)).decision === 'Allow');
}

const approvals = (o: KubeObject) => conditions(o).filter((c) => ApprovalTypes.includes(str(c.type))).map((c) => [c.type, c.status]);

/** The CertificateApproval and CertificateSigning admission plugins: approving needs `approve`, issuing `sign`, on the signer. */
async function admitSignerAccess(o: KubeObject, old: KubeObject | undefined, ctx: RequestContext, services: Services): Promise<void> {
  if (!old) return;
  const signerName = str(spec(old).signerName);
  const name = o.metadata.name ?? '';
  if (!isDeepStrictEqual(approvals(o), approvals(old)) && !mayUseSigner(services, ctx, 'approve', signerName))
    throw forbidden(Resource, name, `user not permitted to approve requests with signerName ${JSON.stringify(signerName)}`);
  if (str(status(o).certificate) !== str(status(old).certificate) && !mayUseSigner(services, ctx, 'sign', signerName))
    throw forbidden(Resource, name, `user not permitted to sign requests with signerName ${JSON.stringify(signerName)}`);
}

/** extractCSRStatus: Denied or Approved or Pending, then Failed, then Issued. */
const conditionCell = (o: KubeObject): string =>
  [hasCondition(o, 'Denied') ? 'Denied' : hasCondition(o, 'Approved') ? 'Approved' : 'Pending', ...(hasCondition(o, 'Failed') ? ['Failed'] : []), ...(str(status(o).certificate) ? ['Issued'] : [])].join(',');

const requestedDuration = (o: KubeObject): string => {
  const e = spec(o).expirationSeconds;
  return typeof e === 'number' ? humanDuration(e * 1000) : '<none>';
};

export const certificateSigningRequest = inGroup(CertificatesGroup, 'v1')({
  kind: 'CertificateSigningRequest',
  plural: 'certificatesigningrequests',
  singular: 'certificatesigningrequest',
  namespaced: false,
  verbs: AllVerbs,
  shortNames: ['csr'],
  subresources: {
    status: statusSubresource(statusStrategy),
    approval: statusSubresource(approvalStrategy),
  },
  strategy: strategyFor('v1'),
  hooks: { admit: admitSignerAccess },
  columnLayout: 'own',
  columns: [
    nameColumn,
    ageColumn,
    column('SignerName', (o) => str(spec(o).signerName), { description: 'Name of the signer that will sign the request.' }),
    column('Requestor', (o) => str(spec(o).username), { description: 'Name of the user who created the request.' }),
    column('RequestedDuration', requestedDuration, { description: 'Duration requested for the issued certificate.' }),
    column('Condition', conditionCell, { description: 'Condition of the request: Pending, Approved, Denied, Failed, Issued.' }),
  ],
});

/**
 * v1beta1 defaults (SetDefaults_CertificateSigningRequestSpec): usages `digital signature, key
 * encipherment`, and a signerName guessed from the request: a kubelet's client or serving request
 * names its signer, anything else kubernetes.io/legacy-unknown.
 */
function v1beta1Defaults(o: KubeObject): void {
  const s = obj(o.spec);
  if (!Array.isArray(s.usages) || s.usages.length === 0) s.usages = ['digital signature', 'key encipherment'];
  if (s.signerName) return;
  const csr = parsedRequest(o);
  const usages = arr(s.usages).map(str);
  s.signerName = csr && !kubeletClientRefusal(csr, usages) ? KubeletClient : csr && !kubeletServingRefusal(csr, usages) ? KubeletServing : LegacyUnknown;
}

export const certificateSigningRequestV1beta1 = servedAt(certificateSigningRequest, { group: CertificatesGroup, version: 'v1beta1' }, { strategy: strategyFor('v1beta1', v1beta1Defaults) });
