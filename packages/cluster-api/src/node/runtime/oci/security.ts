/**
 * A container's security context as the kubelet and runc apply it: who it runs as (the image's
 * User, then runAsUser/runAsGroup, the container's fields winning over the pod's; runAsNonRoot
 * refusing uid 0 with the kubelet's CreateContainerConfigError), its groups (the user's primary
 * group, fsGroup, supplementalGroups), its capabilities (containerd's default set, then drop and
 * add; every one when privileged), no_new_privs (allowPrivilegeEscalation: false), seccomp
 * (RuntimeDefault is this runtime's profile; Unconfined, or privileged, none; unset is unconfined,
 * as the kubelet's default) and a read-only root.
 */
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerConfigError } from '../../pods/downward.js';
import type { Container, Pod } from '../../types.js';

/** containerd's default capabilities (oci.defaultUnixCaps). */
export const DefaultCapabilities = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE'];

const AllCapabilities = [
  'CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'LINUX_IMMUTABLE', 'NET_BIND_SERVICE',
  'NET_BROADCAST', 'NET_ADMIN', 'NET_RAW', 'IPC_LOCK', 'IPC_OWNER', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_CHROOT', 'SYS_PTRACE', 'SYS_PACCT', 'SYS_ADMIN',
  'SYS_BOOT', 'SYS_NICE', 'SYS_RESOURCE', 'SYS_TIME', 'SYS_TTY_CONFIG', 'MKNOD', 'LEASE', 'AUDIT_WRITE', 'AUDIT_CONTROL', 'SETFCAP', 'MAC_OVERRIDE',
  'MAC_ADMIN', 'SYSLOG', 'WAKE_ALARM', 'BLOCK_SUSPEND', 'AUDIT_READ', 'PERFMON', 'BPF', 'CHECKPOINT_RESTORE',
];

/** The uid a function image runs as when neither it nor the pod names a user (distroless' `nonroot`). */
export const FunctionUser = 65532;

export interface Identity {
  uid: number;
  gid: number;
  additionalGids: number[];
}

export interface Security {
  user: Identity;
  capabilities: string[];
  noNewPrivileges: boolean;
  seccomp: boolean;
  privileged: boolean;
  readonlyRootfs: boolean;
}

/**
 * `path` inside `root`, its symlinks followed as inside a chroot (an absolute target starts at the
 * root, `..` stops there), as runc's securejoin does: an image's `/etc/passwd → /etc/shadow` names the
 * image's file, never the host's.
 */
export function pathInRoot(root: string, path: string): string {
  const pending = path.split('/');
  const current: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '' || part === '.') continue;
    if (part === '..') {
      current.pop();
      continue;
    }
    const full = join(root, ...current, part);
    let link = false;
    try {
      link = lstatSync(full).isSymbolicLink();
    } catch {
      // Missing: named as is (reading it fails).
    }
    if (!link) {
      current.push(part);
      continue;
    }
    if (++links > 40) throw new Error(`too many levels of symlinks in ${path}`);
    const target = readlinkSync(full);
    if (target.startsWith('/')) current.length = 0;
    pending.unshift(...target.split('/'));
  }
  return join(root, ...current);
}

/** name or id → the numbers of an /etc/passwd or /etc/group of the image. */
function lookup(rootfs: string, file: 'passwd' | 'group', name: string): { id: number; gid?: number } | undefined {
  let text = '';
  try {
    text = readFileSync(pathInRoot(rootfs, `/etc/${file}`), 'utf8');
  } catch {
    return undefined;
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f[0] === name || f[2] === name) return { id: Number(f[2]), gid: file === 'passwd' ? Number(f[3]) : undefined };
  }
  return undefined;
}

const numeric = (s: string): number | undefined => (/^\d+$/.test(s) ? Number(s) : undefined);

const podDesc = (pod: Pod) => `pod: "${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})", container: `;

/** Who the container runs as: CreateContainerConfigError when runAsNonRoot cannot hold. */
export function identity(pod: Pod, c: Container, imageUser: string | undefined, rootfs: string, defaultUid: number | undefined): Identity {
  const psc = pod.spec.securityContext ?? {};
  const sc = c.securityContext ?? {};
  const [userPart = '', groupPart] = (imageUser ?? '').split(':');
  let uid = sc.runAsUser ?? psc.runAsUser;
  let gid: number | undefined;
  if (uid === undefined && userPart) {
    const found = numeric(userPart) ?? lookup(rootfs, 'passwd', userPart)?.id;
    if (found === undefined) {
      if (sc.runAsNonRoot ?? psc.runAsNonRoot) throw new ContainerConfigError(`container has runAsNonRoot and image has non-numeric user (${userPart}), cannot verify user is non-root (${podDesc(pod)}${c.name})`);
      throw new ContainerConfigError(`unable to find user ${userPart}: no matching entries in passwd file`);
    }
    uid = found;
  }
  uid ??= defaultUid ?? 0;
  if ((sc.runAsNonRoot ?? psc.runAsNonRoot) && uid === 0) {
    throw new ContainerConfigError((sc.runAsUser ?? psc.runAsUser) !== undefined
      ? `container's runAsUser breaks non-root policy (${podDesc(pod)}${c.name})`
      : `container has runAsNonRoot and image will run as root (${podDesc(pod)}${c.name})`);
  }
  gid = sc.runAsGroup ?? psc.runAsGroup;
  if (gid === undefined && groupPart) gid = numeric(groupPart) ?? lookup(rootfs, 'group', groupPart)?.id;
  gid ??= lookup(rootfs, 'passwd', String(uid))?.gid ?? (uid === defaultUid ? defaultUid : 0);
  const additionalGids = [...new Set([gid, ...(psc.fsGroup !== undefined ? [psc.fsGroup] : []), ...(psc.supplementalGroups ?? [])])];
  return { uid, gid, additionalGids };
}

const capName = (c: string) => c.toUpperCase().replace(/^CAP_/, '');

export function security(pod: Pod, c: Container, user: Identity): Security {
  const sc = c.securityContext ?? {};
  const privileged = sc.privileged === true;
  const drop = (sc.capabilities?.drop ?? []).map(capName);
  const add = (sc.capabilities?.add ?? []).map(capName);
  const capabilities = privileged ? AllCapabilities
    : drop.includes('ALL') ? [...new Set(add.includes('ALL') ? AllCapabilities : add)]
    : [...new Set([...DefaultCapabilities.filter((n) => !drop.includes(n)), ...(add.includes('ALL') ? AllCapabilities : add)])];
  const profile = (sc.seccompProfile ?? pod.spec.securityContext?.seccompProfile)?.type;
  if (profile === 'Localhost') throw new ContainerConfigError('seccomp profile type Localhost is not supported by this runtime');
  return {
    user,
    capabilities,
    noNewPrivileges: sc.allowPrivilegeEscalation === false,
    seccomp: !privileged && profile === 'RuntimeDefault',
    privileged,
    readonlyRootfs: sc.readOnlyRootFilesystem === true,
  };
}
