/**
 * A container's OCI bundle config (config.json, runtime-spec 1.0), as runc's default spec lays it
 * out (`runc spec`): /proc, /dev, /dev/pts, /dev/shm, /dev/mqueue, a read-only /sys and cgroup
 * mount, masked and read-only /proc paths, every device denied but the default ones; then the
 * container's process (args, env, cwd, user, capabilities, no_new_privs; rlimits are the agent's), its mounts
 * (volumes, the pod's /etc/hosts and /etc/hostname, the node's Node.js for function images), its
 * namespaces (the pod's network namespace; the host's network, pid or ipc only when the pod asks)
 * and its resources in cgroups: the v1 fields, or the unified (v2) ones on a cgroup2 host.
 */
import { parseQuantity } from '../../../api/quantity.js';
import type { Container } from '../../types.js';
import { runtimeDefaultSeccomp } from './seccomp.js';
import type { Security } from './security.js';

export interface BundleMount {
  destination: string;
  source: string;
  readonly: boolean;
}

export interface SpecInput {
  args: string[];
  env: string[];
  cwd: string;
  hostname: string;
  security: Security;
  mounts: BundleMount[];
  /** The pod's network namespace; undefined: the host's (hostNetwork). */
  netns?: string;
  hostPID: boolean;
  hostIPC: boolean;
  resources: Container['resources'];
  cgroupsPath: string;
  cgroupV2: boolean;
}

/** Each container's pids limit (the kubelet's --pod-max-pids, per container here). */
export const PidsLimit = 4096;
const CfsPeriod = 100_000;

const MaskedPaths = ['/proc/acpi', '/proc/asound', '/proc/kcore', '/proc/keys', '/proc/latency_stats', '/proc/timer_list', '/proc/timer_stats', '/proc/sched_debug', '/proc/scsi', '/sys/firmware', '/sys/devices/virtual/powercap'];
const ReadonlyPaths = ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger'];

const SystemMounts = (privileged: boolean) => [
  { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
  { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
  { destination: '/dev/pts', type: 'devpts', source: 'devpts', options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'] },
  { destination: '/dev/shm', type: 'tmpfs', source: 'shm', options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=65536k'] },
  { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
  { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', privileged ? 'rw' : 'ro'] },
  { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['nosuid', 'noexec', 'nodev', 'relatime', 'ro'] },
];

/** cpu and memory of the container's resources as cgroup settings (requests.cpu defaults to limits.cpu, as the API's defaulting). */
export function cgroupResources(resources: Container['resources'], v2: boolean): Record<string, unknown> {
  const limitCpu = parseQuantity(resources?.limits?.cpu);
  const requestCpu = parseQuantity(resources?.requests?.cpu) ?? limitCpu;
  const memory = parseQuantity(resources?.limits?.memory);
  const milli = (v: number) => Math.ceil(Math.round(v * 1e9) / 1e6);
  // The kubelet's MilliCPUToShares (min 2) and MilliCPUToQuota (min 1 ms); memory limits disable swap beyond them.
  const shares = requestCpu ? Math.max(2, Math.floor((milli(requestCpu) * 1024) / 1000)) : 2;
  const quota = limitCpu ? Math.max(1000, Math.floor((milli(limitCpu) * CfsPeriod) / 1000)) : undefined;
  const bytes = memory && memory > 0 ? Math.floor(memory) : undefined;
  if (v2) {
    // The kubelet's CPUSharesToCPUWeight.
    const unified: Record<string, string> = { 'cpu.weight': String(Math.floor(1 + ((shares - 2) * 9999) / 262142)), 'pids.max': String(PidsLimit) };
    unified['cpu.max'] = `${quota ?? 'max'} ${CfsPeriod}`;
    if (bytes) (unified['memory.max'] = String(bytes), (unified['memory.swap.max'] = '0'));
    return { unified };
  }
  return {
    cpu: { shares, period: CfsPeriod, ...(quota ? { quota } : {}) },
    pids: { limit: PidsLimit },
    ...(bytes ? { memory: { limit: bytes, swap: bytes } } : {}),
  };
}

export function bundleConfig(input: SpecInput): Record<string, unknown> {
  const { security: s } = input;
  const caps = s.capabilities.map((c) => `CAP_${c}`);
  const namespaces: { type: string; path?: string }[] = [{ type: 'mount' }, { type: 'uts' }];
  if (!input.hostPID) namespaces.push({ type: 'pid' });
  if (!input.hostIPC) namespaces.push({ type: 'ipc' });
  if (input.netns) namespaces.push({ type: 'network', path: input.netns });
  return {
    ociVersion: '1.0.2',
    process: {
      terminal: false,
      user: { uid: s.user.uid, gid: s.user.gid, additionalGids: s.user.additionalGids },
      args: input.args,
      env: input.env,
      cwd: input.cwd,
      capabilities: { bounding: caps, effective: caps, permitted: caps },
      noNewPrivileges: s.noNewPrivileges,
    },
    root: { path: 'rootfs', readonly: s.readonlyRootfs },
    hostname: input.hostname,
    mounts: [
      ...SystemMounts(s.privileged),
      ...input.mounts.map((m) => ({ destination: m.destination, type: 'bind', source: m.source, options: ['rbind', 'rprivate', m.readonly ? 'ro' : 'rw'] })),
    ],
    linux: {
      cgroupsPath: input.cgroupsPath,
      resources: { ...cgroupResources(input.resources, input.cgroupV2), devices: [{ allow: s.privileged, access: 'rwm' }] },
      namespaces,
      ...(s.privileged ? {} : { maskedPaths: MaskedPaths, readonlyPaths: ReadonlyPaths }),
      ...(s.seccomp ? { seccomp: runtimeDefaultSeccomp() } : {}),
    },
  };
}
