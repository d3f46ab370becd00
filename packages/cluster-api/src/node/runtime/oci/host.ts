/**
 * What the oci runtime needs of the machine, found once: an OCI runtime binary (runc; crun is
 * detected and refused, see below), conmon, the CNI plugins, root, the namespaces, and which cgroup
 * layout the host has. `ociSupport()` says whether the oci runtime can run here and, when it
 * cannot, what is missing (serve's start-up warning names it).
 *
 * crun 1.8 refuses this kind of host (a cgroup-v1 "hybrid" layout: v1 controllers with a tmpfs
 * /sys/fs/cgroup), while runc 1.1 runs on v1, hybrid and v2 alike: runc is the one supported.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, statfsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

const Cgroup2Magic = 0x63677270;

/** The first executable of that name on PATH (or in the usual sbin directories), else undefined. */
export function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const dir of dirs) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

export interface OciHost {
  runc: string;
  conmon: string;
  /** Where the CNI plugin binaries are. */
  cniPath: string;
  /** The unified hierarchy (cgroup v2) at /sys/fs/cgroup, else v1 (legacy or hybrid). */
  cgroupV2: boolean;
  /** `runc --version`'s version. */
  version: string;
}

const CniDirs = ['/usr/lib/cni', '/opt/cni/bin', '/usr/libexec/cni'];
const CniPlugins = ['bridge', 'host-local', 'loopback', 'portmap'];

export const cgroupV2 = (): boolean => {
  try {
    return statfsSync('/sys/fs/cgroup').type === Cgroup2Magic;
  } catch {
    return false;
  }
};

/** The oci runtime's needs on this machine, or the list of what is missing. */
export function ociSupport(): { host: OciHost } | { missing: string[] } {
  const missing: string[] = [];
  if (process.platform !== 'linux') return { missing: ['Linux (namespaces, cgroups)'] };
  if (process.getuid?.() !== 0) missing.push('root (the agent must run as root to create namespaces and cgroups)');
  const runc = which('runc');
  if (!runc) missing.push(which('crun') ? 'runc (crun is not supported: crun 1.8 refuses cgroup-v1 hybrid hosts)' : 'runc');
  const conmon = which('conmon');
  if (!conmon) missing.push('conmon');
  const cniPath = CniDirs.find((d) => CniPlugins.every((p) => existsSync(join(d, p))));
  if (!cniPath) missing.push(`the CNI plugins ${CniPlugins.join(', ')} (containernetworking-plugins)`);
  if (!existsSync('/proc/self/ns/net') || !existsSync('/proc/self/ns/pid')) missing.push('network and pid namespaces');
  let version = '';
  if (missing.length === 0 && runc) {
    try {
      version = /runc version (\S+)/.exec(execFileSync(runc, ['--version'], { encoding: 'utf8', timeout: 5000 }))?.[1] ?? 'unknown';
    } catch {
      missing.push('a working runc (`runc --version` failed)');
    }
  }
  return missing.length ? { missing } : { host: { runc: runc!, conmon: conmon!, cniPath: cniPath!, cgroupV2: cgroupV2(), version } };
}

/** This machine's oci host, or an error naming what it lacks. */
export function ociHost(): OciHost {
  const support = ociSupport();
  if ('missing' in support) throw new Error(`the oci runtime cannot run here: missing ${support.missing.join('; ')}`);
  return support.host;
}
