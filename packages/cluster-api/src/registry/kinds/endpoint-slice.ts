/**
 * EndpointSlice (discovery.k8s.io/v1): a Service's endpoints in slices of at most 1000, written by
 * the EndpointSlice controller. ValidateEndpointSlice: an address type (fixed once set), 1–100
 * addresses per endpoint of that type, ports with a protocol, an optional DNS-label name and 1–65535.
 */
import type { KubeObject } from '../../api/meta.js';
import { check, immutable, isDNS1123Label, isDNS1123Subdomain, notSupported, required, tooMany, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, column, inGroup, obj, setDefault, str, type Obj } from './common.js';
import { validateIPOfFamily, validatePort, validateProtocol } from './addresses.js';

const AddressTypes = ['IPv4', 'IPv6', 'FQDN'] as const;
const MaxEndpoints = 1000;
const MaxAddresses = 100;
const MaxPorts = 20000;

const defaults = (o: KubeObject): void => {
  for (const p of arr(o.ports)) if (p && typeof p === 'object') {
    setDefault(p as Obj, 'protocol', 'TCP');
    if ((p as Obj).name === undefined) (p as Obj).name = '';
  }
};

const validateAddress = (type: unknown, address: string, at: string): FieldError[] => {
  if (type === 'IPv4') return validateIPOfFamily(address, 4, at);
  if (type === 'IPv6') return validateIPOfFamily(address, 6, at);
  return check(at, address, isDNS1123Subdomain);
};

const validate = (o: KubeObject): FieldError[] => {
  const errs: FieldError[] = [];
  if (!o.addressType) errs.push(required('addressType'));
  else if (!AddressTypes.includes(o.addressType as never)) errs.push(notSupported('addressType', o.addressType, AddressTypes));
  const endpoints = arr(o.endpoints).map(obj);
  if (endpoints.length > MaxEndpoints) errs.push(tooMany('endpoints', endpoints.length, MaxEndpoints));
  endpoints.forEach((e, i) => {
    const addresses = arr(e.addresses).map(str);
    if (addresses.length === 0) errs.push(required(`endpoints[${i}].addresses`, 'must contain at least 1 address'));
    if (addresses.length > MaxAddresses) errs.push(tooMany(`endpoints[${i}].addresses`, addresses.length, MaxAddresses));
    addresses.forEach((a, j) => errs.push(...validateAddress(o.addressType, a, `endpoints[${i}].addresses[${j}]`)));
    if (e.hostname !== undefined && e.hostname !== null) errs.push(...check(`endpoints[${i}].hostname`, str(e.hostname), isDNS1123Label));
  });
  const ports = arr(o.ports).map(obj);
  if (ports.length > MaxPorts) errs.push(tooMany('ports', ports.length, MaxPorts));
  ports.forEach((p, i) => {
    if (str(p.name)) errs.push(...check(`ports[${i}].name`, str(p.name), isDNS1123Label));
    errs.push(...validateProtocol(p.protocol, `ports[${i}].protocol`));
    if (p.port !== undefined && p.port !== null) errs.push(...validatePort(p.port, `ports[${i}].port`));
  });
  return errs;
};

const validateUpdate = (o: KubeObject, old: KubeObject): FieldError[] =>
  o.addressType === old.addressType ? [] : [immutable('addressType', o.addressType)];

const listWithMore = (list: string[]): string => {
  if (list.length > 3) return `${list.slice(0, 3).join(',')} + ${list.length - 3} more...`;
  return list.join(',') || '<unset>';
};

export const endpointSlice = inGroup('discovery.k8s.io', 'v1')({
  kind: 'EndpointSlice',
  plural: 'endpointslices',
  singular: 'endpointslice',
  namespaced: true,
  verbs: AllVerbs,
  fields: ['addressType', 'endpoints', 'ports'],
  strategy: { prepareForCreate: defaults, prepareForUpdate: defaults, validate, validateUpdate, generationChanged: () => false },
  columns: [
    column('AddressType', (o) => str(o.addressType), { description: 'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type.' }),
    column('Ports', (o) => listWithMore(arr(o.ports).map(obj).map((p) => (typeof p.port === 'number' ? String(p.port) : str(p.name) || '*'))), { description: 'ports specifies the list of network ports exposed by each endpoint in this slice.' }),
    column('Endpoints', (o) => listWithMore(arr(o.endpoints).flatMap((e) => arr(obj(e).addresses).map(str))), { description: 'endpoints is a list of unique endpoints in this slice.' }),
  ],
});

