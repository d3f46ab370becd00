/**
 * APIService (apiregistration.k8s.io/v1): a group version and who serves it. `Local` ones (no
 * `spec.service`) are this server's own group versions, kept by the aggregation layer's autoregister
 * (aggregation/autoregister.ts); one naming a Service is an extension API server, proxied to
 * (aggregation/). kube-aggregator's validation (ValidateAPIService) and defaults (port 443); status is
 * written through `apiservices/status` by the availability check.
 */
import type { KubeObject } from '../../api/meta.js';
import { check, invalidValue, isDNS1035Label, isDNS1123Subdomain, isValidPathSegmentName, required, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { AllVerbs, arr, Base64, column, defaultedWithStatus, inGroup, obj, spec, str } from './common.js';

const int = (v: unknown): number => (Number.isInteger(v) ? (v as number) : 0);

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const group = str(s.group);
  const version = str(s.version);
  const errs: FieldError[] = [];
  const name = o.metadata.name ?? '';
  const wanted = `${version}.${group}`;
  if (name && isValidPathSegmentName(name).length === 0 && name !== wanted) errs.push(invalidValue('metadata.name', name, `must be \`spec.version+"."+spec.group\`: "${wanted}"`));
  if (!group && version !== 'v1') errs.push(required('spec.group', 'only v1 may have an empty group and it better be legacy kube'));
  if (group) errs.push(...check('spec.group', group, isDNS1123Subdomain));
  errs.push(...check('spec.version', version, isDNS1035Label));
  const groupPriority = int(s.groupPriorityMinimum);
  if (groupPriority <= 0 || groupPriority > 20000) errs.push(invalidValue('spec.groupPriorityMinimum', s.groupPriorityMinimum ?? 0, 'must be positive and less than 20000'));
  const versionPriority = int(s.versionPriority);
  if (versionPriority <= 0 || versionPriority > 1000) errs.push(invalidValue('spec.versionPriority', s.versionPriority ?? 0, 'must be positive and less than 1000'));
  const caBundle = str(s.caBundle);
  if (caBundle && !Base64.test(caBundle)) return [...errs, invalidValue('spec.caBundle', '<certificate data>', 'must be base64-encoded')];
  if (s.service === undefined || s.service === null) {
    if (caBundle) errs.push(invalidValue('spec.caBundle', `${Buffer.from(caBundle, 'base64').length} bytes`, 'local APIServices may not have a caBundle'));
    if (s.insecureSkipTLSVerify === true) errs.push(invalidValue('spec.insecureSkipTLSVerify', true, 'local APIServices may not have insecureSkipTLSVerify'));
    return errs;
  }
  const service = obj(s.service);
  if (!str(service.namespace)) errs.push(required('spec.service.namespace'));
  if (!str(service.name)) errs.push(required('spec.service.name'));
  const port = service.port;
  if (!(Number.isInteger(port) && (port as number) >= 1 && (port as number) <= 65535)) errs.push(invalidValue('spec.service.port', port, 'port is not valid: must be between 1 and 65535, inclusive'));
  if (s.insecureSkipTLSVerify === true && caBundle) errs.push(invalidValue('spec.insecureSkipTLSVerify', true, 'may not be true if caBundle is present'));
  return errs;
};

/** SetDefaults_ServiceReference: port 443. */
const defaults = (o: KubeObject): void => {
  const service = spec(o).service;
  if (service && typeof service === 'object' && obj(service).port === undefined) obj(service).port = 443;
};

const available = (o: KubeObject): string => {
  const c = obj(arr(obj(o.status).conditions).map(obj).find((x) => x.type === 'Available'));
  if (c.status === 'True') return 'True';
  return c.reason ? `${str(c.status) || 'Unknown'} (${str(c.reason)})` : str(c.status) || 'Unknown';
};

export const apiService = inGroup('apiregistration.k8s.io', 'v1')({
  kind: 'APIService',
  plural: 'apiservices',
  singular: 'apiservice',
  namespaced: false,
  verbs: AllVerbs,
  categories: ['api-extensions'],
  subresources: { status: statusSubresource() },
  nameRule: isValidPathSegmentName,
  strategy: {
    ...defaultedWithStatus(defaults),
    validate,
  },
  columns: [
    column('Service', (o) => {
      const svc = spec(o).service;
      return svc ? `${str(obj(svc).namespace)}/${str(obj(svc).name)}` : 'Local';
    }, { description: 'The reference to the service that hosts this API endpoint.' }),
    column('Available', available, { description: 'Whether this service is available.' }),
  ],
});
