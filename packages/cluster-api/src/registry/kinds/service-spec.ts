/** Service spec validation (the core of Kubernetes' ValidateService). */
import type { KubeObject } from '../../api/meta.js';
import { duplicate, forbiddenField, invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { arr, obj, spec, str, type Obj } from './common.js';

const Types = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] as const;
const Protocols = ['SCTP', 'TCP', 'UDP'] as const;

const validPort = (n: unknown): boolean => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535;

const validatePorts = (s: Obj): FieldError[] => {
  const ports = arr(s.ports).map(obj);
  if (ports.length === 0) return s.type === 'ExternalName' ? [] : [required('spec.ports')];
  const names = new Set<string>();
  return ports.flatMap((p, i) => {
    const f = `spec.ports[${i}]`;
    const errs: FieldError[] = [];
    if (ports.length > 1 && !str(p.name)) errs.push(required(`${f}.name`));
    if (str(p.name) && names.has(str(p.name))) errs.push(duplicate(`${f}.name`, p.name));
    names.add(str(p.name));
    if (p.port === undefined) errs.push(required(`${f}.port`));
    else if (!validPort(p.port)) errs.push(invalidValue(`${f}.port`, p.port, 'must be between 1 and 65535, inclusive'));
    if (!Protocols.includes(p.protocol as never)) errs.push(notSupported(`${f}.protocol`, p.protocol, Protocols));
    if (p.nodePort && !['NodePort', 'LoadBalancer'].includes(str(s.type))) {
      errs.push(forbiddenField(`${f}.nodePort`, `may not be used when \`type\` is '${str(s.type)}'`));
    }
    const t = p.targetPort;
    if (typeof t === 'number' && !validPort(t)) errs.push(invalidValue(`${f}.targetPort`, t, 'must be between 1 and 65535, inclusive'));
    return errs;
  });
};

export const validateService = (o: KubeObject): FieldError[] => {
  const s = spec(o);
  const errs = validatePorts(s);
  if (!Types.includes(s.type as never)) errs.push(notSupported('spec.type', s.type, Types));
  if (s.type === 'ExternalName' && !str(s.externalName)) errs.push(required('spec.externalName'));
  return errs;
};
