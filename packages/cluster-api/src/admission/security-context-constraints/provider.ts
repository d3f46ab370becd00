/**
 * One SCC applied to a pod (OpenShift's sccmatching provider, AssignSecurityContext): its strategies
 * fill what the pod leaves unset — the pod's fsGroup, supplementalGroups, SELinux level and seccomp
 * profile, each container's runAsUser (or runAsNonRoot), allowPrivilegeEscalation,
 * readOnlyRootFilesystem and dropped/added capabilities — on a copy, then the copy is checked
 * against everything the SCC forbids. Errors read as OpenShift's field errors, rooted at
 * `provider <name>: ` (`provider restricted-v2: .containers[0].privileged: Invalid value: true:
 * Privileged containers are not allowed`).
 */
import type { KubeObject } from '../../api/meta.js';
import { arr, child, obj, str, type Obj } from '../../registry/kinds/common.js';
import { McsAnnotation, parseBlock, parseMcs, SupplementalGroupsAnnotation, UidRangeAnnotation, type IdRange } from './namespace-ranges.js';

/** What a provider draws from the namespace, parsed once when the provider is made (a bad annotation fails here). */
export interface Provider {
  scc: KubeObject;
  name: string;
  uids?: IdRange;
  groups?: IdRange[];
  supplemental?: IdRange[];
  seLinux?: Obj;
}

const strategy = (scc: KubeObject, field: string): Obj => obj(scc[field]);
const rangesOf = (v: unknown): IdRange[] => arr(v).map(obj).map((r) => ({ min: Number(r.min), max: Number(r.max) }));

/** CreateProviderFromConstraint: throws (a clear message) when the namespace lacks what a strategy needs. */
export const providerFor = (scc: KubeObject, ns: KubeObject): Provider => {
  const annotations = ns.metadata.annotations ?? {};
  const name = scc.metadata.name ?? '';
  const p: Provider = { scc, name };
  const user = strategy(scc, 'runAsUser');
  if (user.type === 'MustRunAsRange') {
    p.uids = user.uidRangeMin !== undefined && user.uidRangeMax !== undefined ? { min: Number(user.uidRangeMin), max: Number(user.uidRangeMax) } : parseBlock(annotations[UidRangeAnnotation], UidRangeAnnotation);
  } else if (user.type === 'MustRunAs') {
    const uid = user.uid ?? parseBlock(annotations[UidRangeAnnotation], UidRangeAnnotation).min;
    p.uids = { min: Number(uid), max: Number(uid) };
  }
  for (const [field, key] of [['fsGroup', 'groups'], ['supplementalGroups', 'supplemental']] as const) {
    const s = strategy(scc, field);
    if (s.type !== 'MustRunAs') continue;
    const ranges = rangesOf(s.ranges);
    p[key] = ranges.length > 0 ? ranges : [parseBlock(annotations[SupplementalGroupsAnnotation] ?? annotations[UidRangeAnnotation], SupplementalGroupsAnnotation)];
  }
  const se = strategy(scc, 'seLinuxContext');
  if (se.type === 'MustRunAs') {
    const given = obj(se.seLinuxOptions);
    p.seLinux = given.level !== undefined ? given : { ...given, level: parseMcs(annotations[McsAnnotation]) };
  }
  return p;
};

/** Go's %v of a field value as field.Invalid prints it. */
const shown = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : Array.isArray(v) ? `[]int64{${v.join(', ')}}` : String(v));

class Errors {
  readonly list: string[] = [];
  constructor(private readonly root: string) {}
  invalid(path: string, value: unknown, detail: string): void {
    this.list.push(`${this.root}${path}: Invalid value: ${shown(value)}: ${detail}`);
  }
  forbidden(path: string, detail: string): void {
    this.list.push(`${this.root}${path}: Forbidden: ${detail}`);
  }
  required(path: string, detail: string): void {
    this.list.push(`${this.root}${path}: Required value: ${detail}`);
  }
}

const inRanges = (v: number, ranges: IdRange[]): boolean => ranges.some((r) => v >= r.min && v <= r.max);
const hasStar = (list: unknown): boolean => arr(list).some((x) => x === '*');
const upper = (list: unknown): string[] => arr(list).map((c) => str(c).toUpperCase());

/** The seccomp profile as SCCs name them (`runtime/default`, `localhost/<file>`, `unconfined`). */
const profileName = (p: Obj): string | undefined =>
  p.type === 'RuntimeDefault' ? 'runtime/default' : p.type === 'Unconfined' ? 'unconfined' : p.type === 'Localhost' ? `localhost/${str(p.localhostProfile)}` : undefined;
const profileOf = (name: string): Obj =>
  name === 'runtime/default' || name === 'docker/default' ? { type: 'RuntimeDefault' } : name === 'unconfined' ? { type: 'Unconfined' } : { type: 'Localhost', localhostProfile: name.slice('localhost/'.length) };

const volumeType = (v: Obj): string => Object.keys(v).find((k) => k !== 'name') ?? 'none';

interface ContainerList {
  field: 'initContainers' | 'containers' | 'ephemeralContainers';
  items: Obj[];
}

const containerLists = (spec: Obj): ContainerList[] =>
  (['initContainers', 'containers', 'ephemeralContainers'] as const).map((field) => ({ field, items: arr(spec[field]).map(obj) }));

/** Fills the SCC's defaults into `pod` (changed in place). */
const assign = (p: Provider, pod: KubeObject): void => {
  const spec = child(pod, 'spec');
  const psc = child(spec, 'securityContext');
  if (p.groups && psc.fsGroup === undefined) psc.fsGroup = p.groups[0]!.min;
  if (p.supplemental && arr(psc.supplementalGroups).length === 0) psc.supplementalGroups = [p.supplemental[0]!.min];
  if (p.seLinux && psc.seLinuxOptions === undefined) psc.seLinuxOptions = { ...p.seLinux };
  const profiles = arr(p.scc.seccompProfiles).map(str);
  if (profiles.length > 0 && profiles[0] !== '*' && psc.seccompProfile === undefined) psc.seccompProfile = profileOf(profiles[0]!);
  const userType = str(strategy(p.scc, 'runAsUser').type);
  const allowEscalation = p.scc.allowPrivilegeEscalation !== false;
  const defaultAdd = upper(p.scc.defaultAddCapabilities);
  const requiredDrop = upper(p.scc.requiredDropCapabilities);
  for (const { items } of containerLists(spec)) {
    for (const c of items) {
      const sc = child(c, 'securityContext');
      if (sc.runAsUser === undefined && psc.runAsUser === undefined) {
        if (p.uids) sc.runAsUser = p.uids.min;
        else if (userType === 'MustRunAsNonRoot' && sc.runAsNonRoot === undefined && psc.runAsNonRoot === undefined) sc.runAsNonRoot = true;
      }
      if (sc.allowPrivilegeEscalation === undefined) {
        if (typeof p.scc.defaultAllowPrivilegeEscalation === 'boolean') sc.allowPrivilegeEscalation = p.scc.defaultAllowPrivilegeEscalation;
        else if (!allowEscalation) sc.allowPrivilegeEscalation = false;
      }
      if (p.scc.readOnlyRootFilesystem === true && sc.readOnlyRootFilesystem === undefined) sc.readOnlyRootFilesystem = true;
      if (defaultAdd.length > 0 || requiredDrop.length > 0) {
        const capabilities = child(sc, 'capabilities');
        const add = upper(capabilities.add);
        const drop = upper(capabilities.drop);
        const adds = defaultAdd.filter((cap) => !add.includes(cap) && !drop.includes(cap));
        const drops = requiredDrop.filter((cap) => !drop.includes(cap));
        if (adds.length > 0) capabilities.add = [...arr(capabilities.add), ...adds];
        if (drops.length > 0) capabilities.drop = [...arr(capabilities.drop), ...drops];
      }
    }
  }
};

/** Everything the SCC forbids in `pod` (after its defaults). */
const check = (p: Provider, pod: KubeObject, errs: Errors): void => {
  const { scc } = p;
  const spec = obj(pod.spec);
  const psc = obj(spec.securityContext);
  const podPath = '.spec.securityContext';
  if (spec.hostNetwork === true && scc.allowHostNetwork !== true) errs.invalid(`${podPath}.hostNetwork`, true, 'Host network is not allowed to be used');
  if (spec.hostPID === true && scc.allowHostPID !== true) errs.invalid(`${podPath}.hostPID`, true, 'Host PID is not allowed to be used');
  if (spec.hostIPC === true && scc.allowHostIPC !== true) errs.invalid(`${podPath}.hostIPC`, true, 'Host IPC is not allowed to be used');
  if (p.groups && psc.fsGroup !== undefined && !inRanges(Number(psc.fsGroup), p.groups)) errs.invalid(`${podPath}.fsGroup`, [psc.fsGroup], `${String(psc.fsGroup)} is not an allowed group`);
  if (p.supplemental) for (const g of arr(psc.supplementalGroups)) if (!inRanges(Number(g), p.supplemental)) errs.invalid(`${podPath}.supplementalGroups`, arr(psc.supplementalGroups), `${String(g)} is not an allowed group`);
  const level = p.seLinux?.level;
  if (level !== undefined && obj(psc.seLinuxOptions).level !== undefined && obj(psc.seLinuxOptions).level !== level) errs.invalid(`${podPath}.seLinuxOptions.level`, obj(psc.seLinuxOptions).level, `must be ${str(level)}`);
  const profiles = arr(scc.seccompProfiles).map(str);
  const checkProfile = (path: string, profile: unknown) => {
    if (profile === undefined || hasStar(profiles)) return;
    const name = profileName(obj(profile));
    if (profiles.length === 0) errs.forbidden(path, 'seccomp may not be set');
    else if (!name || !profiles.includes(name)) errs.invalid(path, name ?? '', `${name ?? ''} is not an allowed seccomp profile. Valid values are ${profiles.join(',')}`);
  };
  checkProfile(`${podPath}.seccompProfile`, psc.seccompProfile);
  const volumes = arr(scc.volumes).map(str);
  arr(spec.volumes).map(obj).forEach((v, i) => {
    const type = volumeType(v);
    const allowed = (volumes.includes('*') || volumes.includes(type)) && (type !== 'hostPath' || scc.allowHostDirVolumePlugin === true);
    if (!allowed) errs.invalid(`.spec.volumes[${i}]`, type, `${type} volumes are not allowed to be used`);
  });
  const userType = str(strategy(scc, 'runAsUser').type);
  const allowedCaps = upper(scc.allowedCapabilities);
  const defaultAdd = upper(scc.defaultAddCapabilities);
  const requiredDrop = upper(scc.requiredDropCapabilities);
  for (const { field, items } of containerLists(spec)) {
    items.forEach((c, i) => {
      const at = `.${field}[${i}]`;
      const sc = obj(c.securityContext);
      if (sc.privileged === true && scc.allowPrivilegedContainer !== true) errs.invalid(`${at}.privileged`, true, 'Privileged containers are not allowed');
      const uid = sc.runAsUser ?? psc.runAsUser;
      if (p.uids) {
        if (uid === undefined) errs.required(`${at}.runAsUser`, '');
        else if (!inRanges(Number(uid), [p.uids])) errs.invalid(`${at}.runAsUser`, uid, p.uids.min === p.uids.max ? `must be: ${p.uids.min}` : `must be in the ranges: [${p.uids.min}, ${p.uids.max}]`);
      } else if (userType === 'MustRunAsNonRoot') {
        const nonRoot = sc.runAsNonRoot ?? psc.runAsNonRoot;
        if (uid === 0) errs.invalid(`${at}.runAsUser`, 0, 'running with the root UID is forbidden');
        else if (nonRoot === false) errs.invalid(`${at}.runAsNonRoot`, false, 'must be true');
        else if (uid === undefined && nonRoot !== true) errs.required(`${at}.runAsNonRoot`, 'must be true');
      }
      if (scc.allowPrivilegeEscalation === false && sc.allowPrivilegeEscalation === true) errs.invalid(`${at}.allowPrivilegeEscalation`, true, 'Allowing privilege escalation for containers is not allowed');
      if (scc.readOnlyRootFilesystem === true && sc.readOnlyRootFilesystem !== true) errs.invalid(`${at}.readOnlyRootFilesystem`, sc.readOnlyRootFilesystem ?? false, 'ReadOnlyRootFilesystem must be set to true');
      const levelC = obj(sc.seLinuxOptions).level;
      if (level !== undefined && levelC !== undefined && levelC !== level) errs.invalid(`${at}.seLinuxOptions.level`, levelC, `must be ${str(level)}`);
      const capabilities = obj(sc.capabilities);
      const drop = upper(capabilities.drop);
      for (const cap of upper(capabilities.add)) {
        if (!hasStar(scc.allowedCapabilities) && !allowedCaps.includes(cap) && !defaultAdd.includes(cap)) errs.invalid(`${at}.capabilities.add`, cap, 'capability may not be added');
      }
      if (!drop.includes('ALL')) for (const cap of requiredDrop) if (!drop.includes(cap)) errs.required(`${at}.capabilities.drop`, `${cap} is required to be dropped but was not found`);
      arr(c.ports).map(obj).forEach((port) => {
        if (Number(port.hostPort) > 0 && scc.allowHostPorts !== true) errs.invalid(`${at}.hostPort`, port.hostPort, 'Host ports are not allowed to be used');
      });
      checkProfile(`${at}.seccompProfile`, sc.seccompProfile);
    });
  }
};

/** AssignSecurityContext: the pod with the SCC's defaults, or the errors that keep the SCC from admitting it. */
export const applyTo = (p: Provider, pod: KubeObject): { pod?: KubeObject; errors: string[] } => {
  const copy = structuredClone(pod);
  assign(p, copy);
  const errs = new Errors(`provider ${p.name}: `);
  check(p, copy, errs);
  if (errs.list.length > 0) return { errors: errs.list };
  // An empty securityContext the defaults did not need is not written.
  const spec = obj(copy.spec);
  if (Object.keys(obj(spec.securityContext)).length === 0 && obj(pod.spec).securityContext === undefined) delete spec.securityContext;
  for (const { items } of containerLists(spec)) {
    for (const c of items) {
      const sc = obj(c.securityContext);
      if (Object.keys(obj(sc.capabilities)).length === 0) delete sc.capabilities;
      if (Object.keys(sc).length === 0) delete c.securityContext;
    }
  }
  return { pod: copy, errors: [] };
};
