/**
 * PodSpec defaults and validation shared by Pod, PodTemplate and ReplicationController templates
 * (Kubernetes' SetDefaults_PodSpec / SetDefaults_Container and the core of ValidatePodSpec).
 */
import { isDNS1123Label, check, duplicate, invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { arr, child, obj, setDefault, str, type Obj } from './common.js';
import { validateResourceList } from './quantities.js';

const RestartPolicies = ['Always', 'OnFailure', 'Never'] as const;
const DNSPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'] as const;
const Protocols = ['SCTP', 'TCP', 'UDP'] as const;
const PullPolicies = ['Always', 'IfNotPresent', 'Never'] as const;

/** `:latest` or no tag pulls Always, anything else IfNotPresent (SetDefaults_Container). */
const pullPolicyFor = (image: string): string => {
  const last = image.split('/').pop() ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  return !last.includes(':') || last.endsWith(':latest') ? 'Always' : 'IfNotPresent';
};

export const defaultContainer = (c: Obj): void => {
  setDefault(c, 'imagePullPolicy', pullPolicyFor(str(c.image)));
  setDefault(c, 'terminationMessagePath', '/dev/termination-log');
  setDefault(c, 'terminationMessagePolicy', 'File');
  setDefault(c, 'resources', {});
  for (const p of arr(c.ports)) if (p && typeof p === 'object') setDefault(p as Obj, 'protocol', 'TCP');
};

/** `account`: a spec naming no ServiceAccount gets `default` (the ServiceAccount admission plugin's default for pods). */
/** A Pod's (not a template's) containers request what they limit when they name no request (SetDefaults_Pod). */
export const defaultRequestsFromLimits = (spec: Obj): void => {
  for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) {
    const resources = obj(obj(c).resources);
    if (!resources.limits || typeof resources.limits !== 'object') continue;
    const requests = child(resources, 'requests');
    for (const [k, v] of Object.entries(obj(resources.limits))) if (!(k in requests)) requests[k] = v;
  }
};

export const defaultPodSpec = (spec: Obj, { account = true } = {}): void => {
  setDefault(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'dnsPolicy', 'ClusterFirst');
  setDefault(spec, 'terminationGracePeriodSeconds', 30);
  setDefault(spec, 'schedulerName', 'default-scheduler');
  setDefault(spec, 'serviceAccountName', str(spec.serviceAccount) || (account ? 'default' : ''));
  if (spec.serviceAccountName) setDefault(spec, 'serviceAccount', spec.serviceAccountName);
  else delete spec.serviceAccountName;
  child(spec, 'securityContext');
  for (const c of [...arr(spec.containers), ...arr(spec.initContainers)]) if (c && typeof c === 'object') defaultContainer(c as Obj);
};

const validatePorts = (ports: unknown[], at: string): FieldError[] =>
  ports.flatMap((raw, i) => {
    const p = obj(raw);
    const f = `${at}[${i}]`;
    const errs: FieldError[] = [];
    const n = p.containerPort;
    if (n === undefined) errs.push(required(`${f}.containerPort`));
    else if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 65535) {
      errs.push(invalidValue(`${f}.containerPort`, n, 'must be between 1 and 65535, inclusive'));
    }
    if (p.protocol !== undefined && !Protocols.includes(p.protocol as never)) errs.push(notSupported(`${f}.protocol`, p.protocol, Protocols));
    return errs;
  });

export const validateContainers = (list: unknown, at: string, needOne: boolean): FieldError[] => {
  const items = arr(list);
  if (needOne && items.length === 0) return [required(at)];
  const seen = new Set<string>();
  return items.flatMap((raw, i) => {
    const c = obj(raw);
    const f = `${at}[${i}]`;
    const name = str(c.name);
    const errs: FieldError[] = [];
    if (!name) errs.push(required(`${f}.name`));
    else {
      errs.push(...check(`${f}.name`, name, isDNS1123Label));
      if (seen.has(name)) errs.push(duplicate(`${f}.name`, name));
      seen.add(name);
    }
    if (!str(c.image).trim()) errs.push(required(`${f}.image`));
    if (c.imagePullPolicy !== undefined && !PullPolicies.includes(c.imagePullPolicy as never)) {
      errs.push(notSupported(`${f}.imagePullPolicy`, c.imagePullPolicy, PullPolicies));
    }
    errs.push(...validatePorts(arr(c.ports), `${f}.ports`));
    const resources = obj(c.resources);
    errs.push(...validateResourceList(resources.requests, `${f}.resources.requests`), ...validateResourceList(resources.limits, `${f}.resources.limits`));
    arr(c.env).forEach((e, j) => { if (!str(obj(e).name)) errs.push(required(`${f}.env[${j}].name`)); });
    return errs;
  });
};

export const validatePodSpec = (spec: Obj, at: string): FieldError[] => {
  const errs = [...validateContainers(spec.containers, `${at}.containers`, true), ...validateContainers(spec.initContainers, `${at}.initContainers`, false)];
  const rp = spec.restartPolicy;
  if (rp !== undefined && !RestartPolicies.includes(rp as never)) errs.push(notSupported(`${at}.restartPolicy`, rp, RestartPolicies));
  const dp = spec.dnsPolicy;
  if (dp !== undefined && !DNSPolicies.includes(dp as never)) errs.push(notSupported(`${at}.dnsPolicy`, dp, DNSPolicies));
  const vols = new Set<string>();
  arr(spec.volumes).forEach((v, i) => {
    const name = str(obj(v).name);
    if (!name) errs.push(required(`${at}.volumes[${i}].name`));
    else if (vols.has(name)) errs.push(duplicate(`${at}.volumes[${i}].name`, name));
    else errs.push(...check(`${at}.volumes[${i}].name`, name, isDNS1123Label));
    vols.add(name);
  });
  return errs;
};
