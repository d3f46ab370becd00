/**
 * Ingress (networking.k8s.io/v1, the storage version; also extensions/v1beta1) and IngressClass
 * (networking.k8s.io/v1). ValidateIngressSpec: a default backend or rules, each HTTP path with a
 * pathType (Exact and Prefix paths absolute), each backend a service (name and port number or name)
 * or a resource. extensions/v1beta1 names backends `serviceName`/`servicePort` and the default one
 * `backend`; the conversion renames them both ways, as Kubernetes' does.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Conversion } from '../definition.js';
import { check, forbiddenField, invalidValue, isDNS1123Subdomain, notSupported, required, type FieldError } from '../generic/validation.js';
import { statusSubresource } from '../subresources/status.js';
import { servedAt } from '../versions.js';
import { AllVerbs, arr, child, column, defaultedWithStatus, inGroup, obj, setDefault, spec, status, str, type Obj } from './common.js';

const PathTypes = ['Exact', 'ImplementationSpecific', 'Prefix'] as const;

const validateBackend = (b: Obj, at: string): FieldError[] => {
  const service = b.service === undefined ? undefined : obj(b.service);
  if (service && b.resource) return [invalidValue(at, '', 'cannot set both service and resource backends')];
  if (b.resource) {
    const r = obj(b.resource);
    return [...(str(r.kind) ? [] : [required(`${at}.resource.kind`)]), ...(str(r.name) ? [] : [required(`${at}.resource.name`)])];
  }
  if (!service) return [invalidValue(at, '', 'resource or service backend is required')];
  const errs = str(service.name) ? check(`${at}.service.name`, str(service.name), isDNS1123Subdomain) : [required(`${at}.service.name`)];
  const port = obj(service.port);
  if (port.name && port.number !== undefined) errs.push(invalidValue(`${at}.service.port`, '', 'cannot set both port name & port number'));
  else if (port.number !== undefined && !(Number.isInteger(port.number) && (port.number as number) >= 1 && (port.number as number) <= 65535)) {
    errs.push(invalidValue(`${at}.service.port.number`, port.number, 'must be between 1 and 65535, inclusive'));
  } else if (!port.name && port.number === undefined) errs.push(invalidValue(`${at}.service.port`, '', 'port name or number is required'));
  return errs;
};

const validatePaths = (paths: Obj[], at: string): FieldError[] =>
  paths.flatMap((p, i) => {
    const f = `${at}[${i}]`;
    const errs: FieldError[] = [];
    if (!p.pathType) errs.push(required(`${f}.pathType`, 'pathType must be specified'));
    else if (!PathTypes.includes(p.pathType as never)) errs.push(notSupported(`${f}.pathType`, p.pathType, PathTypes));
    if ((p.pathType === 'Exact' || p.pathType === 'Prefix') && !str(p.path).startsWith('/')) errs.push(invalidValue(`${f}.path`, p.path ?? '', 'must be an absolute path'));
    return [...errs, ...validateBackend(obj(p.backend), `${f}.backend`)];
  });

const validate = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const rules = arr(s.rules).map(obj);
  const errs: FieldError[] = [];
  if (s.defaultBackend) errs.push(...validateBackend(obj(s.defaultBackend), 'spec.defaultBackend'));
  else if (rules.length === 0) errs.push(invalidValue('spec.rules', rules, 'either `defaultBackend` or `rules` must be specified'));
  rules.forEach((r, i) => {
    const host = str(r.host);
    if (host) errs.push(...check(`spec.rules[${i}].host`, host.startsWith('*.') ? host.slice(2) : host, isDNS1123Subdomain));
    if (r.http) errs.push(...validatePaths(arr(obj(r.http).paths).map(obj), `spec.rules[${i}].http.paths`));
  });
  if (s.ingressClassName !== undefined) errs.push(...check('spec.ingressClassName', str(s.ingressClassName), isDNS1123Subdomain));
  return errs;
};

/** formatHosts: up to three hosts, `*` when none. */
const hosts = (o: KubeObject): string => {
  const rules = arr(spec(o).rules).map(obj);
  const list = rules.slice(0, 3).map((r) => str(r.host)).filter(Boolean);
  if (list.length === 0) return '*';
  return rules.length > 3 ? `${list.join(',')} + ${rules.length - 3} more...` : list.join(',');
};

const addresses = (o: KubeObject): string => {
  const list = [...new Set(arr(obj(status(o).loadBalancer).ingress).map(obj).map((i) => str(i.ip) || str(i.hostname)).filter(Boolean))].sort().join(',');
  return list.length > 16 ? `${list.slice(0, 13)}...` : list;
};

export const ingress = inGroup('networking.k8s.io', 'v1')({
  kind: 'Ingress',
  plural: 'ingresses',
  singular: 'ingress',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['ing'],
  subresources: { status: statusSubresource() },
  strategy: { prepareForCreate: (o) => void (o.status = {}), validate },
  columns: [
    column('Class', (o) => str(spec(o).ingressClassName) || '<none>', { description: 'The name of the IngressClass resource that should be used for additional configuration' }),
    column('Hosts', hosts, { description: 'Hosts that incoming requests are matched against before the ingress rule' }),
    column('Address', addresses, { description: 'Address is a list containing ingress points for the load-balancer' }),
    column('Ports', (o) => (arr(spec(o).tls).length ? '80, 443' : '80'), { description: 'Ports of TLS configurations that open' }),
  ],
});

/** A v1beta1 backend ({serviceName, servicePort}) as v1's ({service: {name, port: {number | name}}}), and back. */
const backendToV1 = (b: Obj): Obj => {
  const { serviceName, servicePort, ...rest } = b;
  if (serviceName === undefined && servicePort === undefined) return rest;
  const port = typeof servicePort === 'number' ? { number: servicePort } : servicePort === undefined ? {} : { name: String(servicePort) };
  return { ...rest, service: { name: serviceName, port } };
};
const backendToV1beta1 = (b: Obj): Obj => {
  const { service, ...rest } = b;
  if (!service) return rest;
  const port = obj(obj(service).port);
  return { ...rest, serviceName: obj(service).name, servicePort: port.number ?? port.name };
};

const mapBackends = (o: KubeObject, map: (b: Obj) => Obj, from: string, to: string): void => {
  const s = obj(o.spec);
  if (s[from] !== undefined) (s[to] = map(obj(s[from]))), from !== to && delete s[from];
  for (const r of arr(s.rules).map(obj)) for (const p of arr(obj(r.http).paths).map(obj)) if (p.backend) p.backend = map(obj(p.backend));
};

const extensionsConversion: Conversion = {
  toStorage: (o) => mapBackends(o, backendToV1, 'backend', 'defaultBackend'),
  fromStorage: (o) => mapBackends(o, backendToV1beta1, 'defaultBackend', 'backend'),
};

/** extensions/v1beta1 checks the same rules on the v1 form; a path's type defaults to ImplementationSpecific there. */
export const ingressExtensions = servedAt(ingress, { group: 'extensions', version: 'v1beta1' }, {
  conversion: extensionsConversion,
  shortNames: undefined,
  strategy: {
    ...defaultedWithStatus(defaultPathTypes),
    validate: (o) => {
      const v1 = structuredClone(o);
      extensionsConversion.toStorage(v1);
      return validate(v1).map((e) => ({ ...e, field: e.field.replace('spec.defaultBackend', 'spec.backend') }));
    },
  },
});

function defaultPathTypes(o: KubeObject): void {
  for (const r of arr(obj(o.spec).rules).map(obj)) for (const p of arr(obj(r.http).paths)) if (p && typeof p === 'object') setDefault(p as Obj, 'pathType', 'ImplementationSpecific');
}

const validateClass = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const controller = str(s.controller);
  const errs: FieldError[] = [];
  if (!controller) errs.push(required('spec.controller'));
  else if (controller.length > 250) errs.push(invalidValue('spec.controller', controller, 'must be no more than 250 characters'));
  else if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[^/]+(\/[^/]+)*$/.test(controller)) {
    errs.push(invalidValue('spec.controller', controller, 'must be a domain-prefixed path (such as "acme.io/foo")'));
  }
  const p = s.parameters === undefined ? undefined : obj(s.parameters);
  if (p) {
    if (!str(p.kind)) errs.push(required('spec.parameters.kind'));
    if (!str(p.name)) errs.push(required('spec.parameters.name'));
    if (p.scope !== undefined && p.scope !== 'Cluster' && p.scope !== 'Namespace') errs.push(notSupported('spec.parameters.scope', p.scope, ['Cluster', 'Namespace']));
    if (p.scope === 'Namespace' && !str(p.namespace)) errs.push(required('spec.parameters.namespace', '`parameters.scope` is set to "Namespace"'));
    if (p.scope !== 'Namespace' && p.namespace !== undefined) errs.push(forbiddenField('spec.parameters.namespace', '`parameters.scope` is set to "Cluster"'));
  }
  return errs;
};

const validateClassUpdate = (o: KubeObject, old: KubeObject): FieldError[] =>
  spec(o).controller === spec(old).controller ? [] : [invalidValue('spec.controller', spec(o).controller, 'field is immutable')];

export const ingressClass = inGroup('networking.k8s.io', 'v1')({
  kind: 'IngressClass',
  plural: 'ingressclasses',
  singular: 'ingressclass',
  namespaced: false,
  verbs: AllVerbs,
  fields: ['spec'],
  strategy: {
    prepareForCreate: (o) => { const p = obj(spec(o).parameters); if (spec(o).parameters) setDefault(child(child(o, 'spec'), 'parameters'), 'scope', p.scope ?? 'Cluster'); },
    validate: validateClass,
    validateUpdate: validateClassUpdate,
  },
  columns: [
    column('Controller', (o) => str(spec(o).controller), { description: 'Controller that is responsible for handling this class' }),
    column('Parameters', (o) => {
      const p = spec(o).parameters;
      if (!p) return '<none>';
      const { kind, apiGroup, name } = obj(p);
      return `${str(kind)}${apiGroup ? `.${str(apiGroup)}` : ''}/${str(name)}`;
    }, { description: 'A reference to a resource with additional parameters' }),
  ],
});

