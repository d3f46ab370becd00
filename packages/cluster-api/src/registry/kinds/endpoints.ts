/**
 * Endpoints (core/v1): the addresses behind a Service, written by the endpoints controller (or by
 * hand for a Service without selector). ValidateEndpoints: each subset has addresses, each address a
 * usable IP, each port a number 1–65535, a protocol, and a name when there are several.
 */
import type { KubeObject } from '../../api/meta.js';
import { check, isDNS1123Label, required, type FieldError } from '../generic/validation.js';
import { AllVerbs, arr, column, core, obj, setDefault, str, type Obj } from './common.js';
import { validateEndpointIP, validatePort, validateProtocol } from './addresses.js';

const defaults = (o: KubeObject): void => {
  for (const subset of arr(o.subsets).map(obj)) for (const p of arr(subset.ports)) if (p && typeof p === 'object') setDefault(p as Obj, 'protocol', 'TCP');
};

const validateAddresses = (list: unknown[], at: string): FieldError[] =>
  list.map(obj).flatMap((a, i) => {
    const f = `${at}[${i}]`;
    const errs = str(a.ip) ? validateEndpointIP(str(a.ip), `${f}.ip`) : [required(`${f}.ip`)];
    if (a.hostname !== undefined && str(a.hostname)) errs.push(...check(`${f}.hostname`, str(a.hostname), isDNS1123Label));
    return errs;
  });

const validate = (o: KubeObject): FieldError[] =>
  arr(o.subsets).map(obj).flatMap((subset, i) => {
    const at = `subsets[${i}]`;
    const errs: FieldError[] = [];
    const [ready, notReady] = [arr(subset.addresses), arr(subset.notReadyAddresses)];
    if (ready.length === 0 && notReady.length === 0) errs.push(required(at, 'must specify `addresses` or `notReadyAddresses`'));
    errs.push(...validateAddresses(ready, `${at}.addresses`), ...validateAddresses(notReady, `${at}.notReadyAddresses`));
    const ports = arr(subset.ports).map(obj);
    ports.forEach((p, j) => {
      const f = `${at}.ports[${j}]`;
      if (ports.length > 1 && !str(p.name)) errs.push(required(`${f}.name`));
      else if (str(p.name)) errs.push(...check(`${f}.name`, str(p.name), isDNS1123Label));
      errs.push(...validatePort(p.port, `${f}.port`), ...validateProtocol(p.protocol, `${f}.protocol`));
    });
    return errs;
  });

/** formatEndpoints: `ip:port` of every ready address and port, the first three, then `+ N more...`. */
export const formatEndpoints = (o: KubeObject): string => {
  const subsets = arr(o.subsets).map(obj);
  if (subsets.length === 0) return '<none>';
  const list: string[] = [];
  let total = 0;
  for (const ss of subsets) {
    const addresses = arr(ss.addresses).map((a) => str(obj(a).ip));
    const ports = arr(ss.ports).map(obj);
    const pairs = ports.length === 0 ? addresses : ports.flatMap((p) => addresses.map((ip) => (ip.includes(':') ? `[${ip}]:${p.port}` : `${ip}:${p.port}`)));
    total += pairs.length;
    list.push(...pairs);
  }
  return total > 3 ? `${list.slice(0, 3).join(',')} + ${total - 3} more...` : list.join(',');
};

export const endpoints = core({
  kind: 'Endpoints',
  plural: 'endpoints',
  singular: 'endpoints',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['ep'],
  fields: ['subsets'],
  strategy: { prepareForCreate: defaults, prepareForUpdate: defaults, validate, generationChanged: () => false },
  columns: [column('Endpoints', formatEndpoints, { description: 'The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.' })],
});
