/**
 * The Pod Security Standards' checks (k8s.io/pod-security-admission/policy), each answering why a
 * pod spec is refused at a level — kube's forbidden reason and detail — or nothing. Baseline's
 * checks hold at restricted too. Run in kube's order (by check id) so messages read as kube's.
 */
import { arr, obj, str, type Obj } from '../../registry/kinds/common.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
export const Levels: readonly Level[] = ['privileged', 'baseline', 'restricted'];

export interface Violation {
  reason: string;
  detail: string;
}

interface PodView {
  metadata: Obj;
  spec: Obj;
}

interface Check {
  id: string;
  level: Exclude<Level, 'privileged'>;
  /** Baseline checks a restricted one replaces at the restricted level (its stricter form). */
  overrides?: readonly string[];
  run(pod: PodView): Violation | undefined;
}

const quote = (items: readonly string[]): string => items.map((i) => JSON.stringify(i)).join(', ');
const plural = (one: string, many: string, n: number): string => (n === 1 ? one : many);
const containersWord = (names: readonly string[]): string => `${plural('container', 'containers', names.length)} ${quote(names)}`;

/** visitContainers: init containers, containers, ephemeral containers. */
const containers = (s: Obj): Obj[] => [...arr(s.initContainers), ...arr(s.containers), ...arr(s.ephemeralContainers)].map(obj);
const sc = (o: Obj): Obj => obj(o.securityContext);
const names = (list: Obj[]): string[] => list.map((c) => str(c.name));

const BaselineCapabilities = new Set(['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE', 'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT']);
const SafeSysctls = new Set([
  'kernel.shm_rmid_forced', 'net.ipv4.ip_local_port_range', 'net.ipv4.ip_unprivileged_port_start', 'net.ipv4.tcp_syncookies', 'net.ipv4.ping_group_range',
  'net.ipv4.ip_local_reserved_ports', 'net.ipv4.tcp_keepalive_time', 'net.ipv4.tcp_fin_timeout', 'net.ipv4.tcp_keepalive_intvl', 'net.ipv4.tcp_keepalive_probes',
]);
const RestrictedVolumeTypes = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'persistentVolumeClaim', 'projected', 'secret']);
const SELinuxTypes = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t', 'container_engine_t']);
const AppArmorPrefix = 'container.apparmor.security.beta.kubernetes.io/';

/** `pod`, `container "a"`, `containers "a", "b"` joined with " and ", as kube names who set a field. */
const setters = (pod: boolean, list: readonly string[]): string => [...(pod ? ['pod'] : []), ...(list.length ? [containersWord(list)] : [])].join(' and ');

const seccompType = (o: Obj): string | undefined => {
  const t = obj(sc(o).seccompProfile).type;
  return typeof t === 'string' ? t : undefined;
};

const Checks: Check[] = [
  {
    id: 'allowPrivilegeEscalation', level: 'restricted',
    run: ({ spec }) => {
      const bad = names(containers(spec).filter((c) => sc(c).allowPrivilegeEscalation !== false));
      return bad.length ? { reason: 'allowPrivilegeEscalation != false', detail: `${containersWord(bad)} must set securityContext.allowPrivilegeEscalation=false` } : undefined;
    },
  },
  {
    id: 'appArmorProfile', level: 'baseline',
    run: ({ metadata, spec }) => {
      const bad: string[] = [];
      const badType = (t: unknown) => typeof t === 'string' && t !== 'RuntimeDefault' && t !== 'Localhost';
      if (badType(obj(sc(spec).appArmorProfile).type)) bad.push(`pod must not set securityContext.appArmorProfile.type to ${JSON.stringify(obj(sc(spec).appArmorProfile).type)}`);
      for (const c of containers(spec)) if (badType(obj(sc(c).appArmorProfile).type)) bad.push(`container ${JSON.stringify(str(c.name))} must not set securityContext.appArmorProfile.type to ${JSON.stringify(obj(sc(c).appArmorProfile).type)}`);
      for (const [k, v] of Object.entries(obj(metadata.annotations))) {
        if (k.startsWith(AppArmorPrefix) && v !== 'runtime/default' && !str(v).startsWith('localhost/')) bad.push(`${k}=${JSON.stringify(v)}`);
      }
      return bad.length ? { reason: plural('forbidden AppArmor profile', 'forbidden AppArmor profiles', bad.length), detail: bad.join(', ') } : undefined;
    },
  },
  {
    id: 'capabilities_baseline', level: 'baseline',
    run: ({ spec }) => {
      const bad: string[] = [];
      const caps = new Set<string>();
      for (const c of containers(spec)) {
        const extra = arr(obj(sc(c).capabilities).add).map(str).filter((a) => !BaselineCapabilities.has(a));
        if (extra.length) bad.push(str(c.name)), extra.forEach((a) => caps.add(a));
      }
      return bad.length ? { reason: 'non-default capabilities', detail: `${containersWord(bad)} must not include ${quote([...caps].sort())} in securityContext.capabilities.add` } : undefined;
    },
  },
  {
    id: 'capabilities_restricted', level: 'restricted', overrides: ['capabilities_baseline'],
    run: ({ spec }) => {
      const missingDrop: string[] = [];
      const adding: string[] = [];
      const caps = new Set<string>();
      for (const c of containers(spec)) {
        const capabilities = obj(sc(c).capabilities);
        if (!arr(capabilities.drop).includes('ALL')) missingDrop.push(str(c.name));
        const extra = arr(capabilities.add).map(str).filter((a) => a !== 'NET_BIND_SERVICE');
        if (extra.length) adding.push(str(c.name)), extra.forEach((a) => caps.add(a));
      }
      const details = [
        ...(missingDrop.length ? [`${containersWord(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`] : []),
        ...(adding.length ? [`${containersWord(adding)} must not include ${quote([...caps].sort())} in securityContext.capabilities.add`] : []),
      ];
      return details.length ? { reason: 'unrestricted capabilities', detail: details.join('; ') } : undefined;
    },
  },
  {
    id: 'hostNamespaces', level: 'baseline',
    run: ({ spec }) => {
      const set = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((f) => spec[f] === true).map((f) => `${f}=true`);
      return set.length ? { reason: 'host namespaces', detail: set.join(', ') } : undefined;
    },
  },
  {
    id: 'hostPathVolumes', level: 'baseline',
    run: ({ spec }) => {
      const bad = arr(spec.volumes).map(obj).filter((v) => v.hostPath !== undefined).map((v) => str(v.name));
      return bad.length ? { reason: 'hostPath volumes', detail: `${plural('volume', 'volumes', bad.length)} ${quote(bad)}` } : undefined;
    },
  },
  {
    id: 'hostPorts', level: 'baseline',
    run: ({ spec }) => {
      const bad: string[] = [];
      const ports = new Set<string>();
      for (const c of containers(spec)) {
        const used = arr(c.ports).map(obj).map((p) => p.hostPort).filter((p) => typeof p === 'number' && p !== 0);
        if (used.length) bad.push(str(c.name)), used.forEach((p) => ports.add(String(p)));
      }
      const list = [...ports].sort();
      return bad.length
        ? { reason: 'hostPort', detail: `${containersWord(bad)} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', list.length)} ${list.join(', ')}` }
        : undefined;
    },
  },
  {
    id: 'privileged', level: 'baseline',
    run: ({ spec }) => {
      const bad = names(containers(spec).filter((c) => sc(c).privileged === true));
      return bad.length ? { reason: 'privileged', detail: `${containersWord(bad)} must not set securityContext.privileged=true` } : undefined;
    },
  },
  {
    id: 'procMount', level: 'baseline',
    run: ({ spec }) => {
      const bad = containers(spec).filter((c) => sc(c).procMount !== undefined && sc(c).procMount !== 'Default');
      const types = [...new Set(bad.map((c) => str(sc(c).procMount)))].sort();
      return bad.length ? { reason: 'procMount', detail: `${containersWord(names(bad))} must not set securityContext.procMount to ${quote(types)}` } : undefined;
    },
  },
  {
    id: 'restrictedVolumes', level: 'restricted', overrides: ['hostPathVolumes'],
    run: ({ spec }) => {
      const bad: string[] = [];
      const types = new Set<string>();
      for (const v of arr(spec.volumes).map(obj)) {
        const own = Object.keys(v).filter((k) => k !== 'name' && !RestrictedVolumeTypes.has(k));
        if (own.length) bad.push(str(v.name)), own.forEach((t) => types.add(t));
      }
      const list = [...types].sort();
      return bad.length
        ? { reason: 'restricted volume types', detail: `${plural('volume', 'volumes', bad.length)} ${quote(bad)} ${plural('uses', 'use', bad.length)} ${plural('restricted volume type', 'restricted volume types', list.length)} ${quote(list)}` }
        : undefined;
    },
  },
  {
    id: 'runAsNonRoot', level: 'restricted',
    run: ({ spec }) => {
      const podValue = sc(spec).runAsNonRoot;
      const explicit: string[] = [];
      const implicit: string[] = [];
      for (const c of containers(spec)) {
        const v = sc(c).runAsNonRoot;
        if (typeof v === 'boolean') { if (!v) explicit.push(str(c.name)); }
        else if (podValue !== true) implicit.push(str(c.name));
      }
      if (podValue === false || explicit.length) return { reason: 'runAsNonRoot != true', detail: `${setters(podValue === false, explicit)} must not set securityContext.runAsNonRoot=false` };
      if (implicit.length) return { reason: 'runAsNonRoot != true', detail: `pod or ${containersWord(implicit)} must set securityContext.runAsNonRoot=true` };
      return undefined;
    },
  },
  {
    id: 'runAsUser', level: 'restricted',
    run: ({ spec }) => {
      const bad = names(containers(spec).filter((c) => sc(c).runAsUser === 0));
      const pod = sc(spec).runAsUser === 0;
      return pod || bad.length ? { reason: 'runAsUser=0', detail: `${setters(pod, bad)} must not set runAsUser=0` } : undefined;
    },
  },
  {
    id: 'seLinuxOptions', level: 'baseline',
    run: ({ spec }) => {
      const details = new Set<string>();
      const judge = (o: Obj): boolean => {
        const se = obj(sc(o).seLinuxOptions);
        let bad = false;
        if (!SELinuxTypes.has(str(se.type))) details.add(`type ${JSON.stringify(str(se.type))}`), (bad = true);
        if (str(se.user)) details.add(`user ${JSON.stringify(str(se.user))}`), (bad = true);
        if (str(se.role)) details.add(`role ${JSON.stringify(str(se.role))}`), (bad = true);
        return bad;
      };
      const pod = judge(spec);
      const bad = names(containers(spec).filter(judge));
      return pod || bad.length ? { reason: 'seLinuxOptions', detail: `${setters(pod, bad)} set forbidden securityContext.seLinuxOptions: ${[...details].join('; ')}` } : undefined;
    },
  },
  {
    id: 'seccompProfile_baseline', level: 'baseline',
    run: ({ spec }) => {
      const pod = seccompType(spec) === 'Unconfined';
      const bad = names(containers(spec).filter((c) => seccompType(c) === 'Unconfined'));
      return pod || bad.length ? { reason: 'seccompProfile', detail: `${setters(pod, bad)} must not set securityContext.seccompProfile.type to "Unconfined"` } : undefined;
    },
  },
  {
    id: 'seccompProfile_restricted', level: 'restricted', overrides: ['seccompProfile_baseline'],
    run: ({ spec }) => {
      const ok = (t: string | undefined) => t === 'RuntimeDefault' || t === 'Localhost';
      const podType = seccompType(spec);
      const podBad = podType !== undefined && !ok(podType);
      const explicit = containers(spec).filter((c) => seccompType(c) !== undefined && !ok(seccompType(c)));
      if (podBad || explicit.length) {
        const values = [...new Set([...(podBad ? [podType!] : []), ...explicit.map((c) => seccompType(c)!)])].sort();
        return { reason: 'seccompProfile', detail: `${setters(podBad, names(explicit))} must not set securityContext.seccompProfile.type to ${quote(values)}` };
      }
      const implicit = podType === undefined ? names(containers(spec).filter((c) => seccompType(c) === undefined)) : [];
      return implicit.length ? { reason: 'seccompProfile', detail: `pod or ${containersWord(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"` } : undefined;
    },
  },
  {
    id: 'sysctls', level: 'baseline',
    run: ({ spec }) => {
      const bad = arr(sc(spec).sysctls).map((s) => str(obj(s).name)).filter((n) => !SafeSysctls.has(n));
      return bad.length ? { reason: 'forbidden sysctls', detail: bad.join(', ') } : undefined;
    },
  },
];

/** The violations of a pod (its metadata and spec) at a level; none at privileged. */
export const violations = (level: Level, pod: PodView): Violation[] => {
  if (level === 'privileged') return [];
  const checks = Checks.filter((c) => level === 'restricted' || c.level === 'baseline');
  const replaced = new Set(checks.flatMap((c) => c.overrides ?? []));
  return checks.filter((c) => !replaced.has(c.id)).flatMap((c) => c.run(pod) ?? []);
};

/** AggregateCheckResult.ForbiddenDetail: `reason (detail), reason (detail)`. */
export const describe = (list: readonly Violation[]): string => list.map((v) => (v.detail ? `${v.reason} (${v.detail})` : v.reason)).join(', ');
