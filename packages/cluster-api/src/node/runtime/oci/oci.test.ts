import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../../config.js';
import type { Container, Pod } from '../../types.js';
import { privatePodCidr } from './pod-cidr.js';
import { bridgeableCidr, chooseContainerRuntime, reachableServiceCidr } from '../choose.js';
import { rangesOverlap } from '../../../registry/kinds/service-allocator.js';
import { DefaultCapabilities, identity, pathInRoot, security } from './security.js';
import { bundleConfig, cgroupResources } from './spec.js';

const rootfs = mkdtempSync(join(tmpdir(), 'oci-rootfs-'));
mkdirSync(join(rootfs, 'etc'));
writeFileSync(join(rootfs, 'etc', 'passwd'), 'root:x:0:0::/root:/bin/sh\napp:x:1001:1002::/home/app:/bin/sh\n');
writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\nstaff:x:50:\n');

const pod = (sc: Pod['spec']['securityContext'] = {}): Pod => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [], securityContext: sc } }) as unknown as Pod;
const container = (sc: Container['securityContext'] = {}): Container => ({ name: 'c', securityContext: sc });

describe('identity (who a container runs as)', () => {
  it('the image\'s user by number or by name from its /etc/passwd and /etc/group, then runAsUser/runAsGroup (the container\'s over the pod\'s)', () => {
    expect(identity(pod(), container(), undefined, rootfs, undefined)).toEqual({ uid: 0, gid: 0, additionalGids: [0] });
    expect(identity(pod(), container(), 'app', rootfs, undefined)).toEqual({ uid: 1001, gid: 1002, additionalGids: [1002] });
    expect(identity(pod(), container(), 'app:staff', rootfs, undefined)).toMatchObject({ uid: 1001, gid: 50 });
    expect(identity(pod(), container(), '7:8', rootfs, undefined)).toMatchObject({ uid: 7, gid: 8 });
    expect(identity(pod({ runAsUser: 5, runAsGroup: 6 }), container({ runAsUser: 9 }), 'app', rootfs, undefined)).toMatchObject({ uid: 9, gid: 6 });
    expect(identity(pod({ fsGroup: 2000, supplementalGroups: [4000, 2000] }), container(), undefined, rootfs, 65532)).toEqual({ uid: 65532, gid: 65532, additionalGids: [65532, 2000, 4000] });
  });

  it('runAsNonRoot refuses uid 0 and a user it cannot check, with the kubelet\'s messages; an unknown user name is refused', () => {
    expect(() => identity(pod({ runAsNonRoot: true }), container(), undefined, rootfs, undefined)).toThrow('container has runAsNonRoot and image will run as root (pod: "p_ns(u1)", container: c)');
    expect(() => identity(pod({ runAsNonRoot: true }), container({ runAsUser: 0 }), 'app', rootfs, undefined)).toThrow('container\'s runAsUser breaks non-root policy (pod: "p_ns(u1)", container: c)');
    expect(() => identity(pod(), container({ runAsNonRoot: true }), 'ghost', rootfs, undefined)).toThrow('container has runAsNonRoot and image has non-numeric user (ghost), cannot verify user is non-root (pod: "p_ns(u1)", container: c)');
    expect(() => identity(pod(), container(), 'ghost', rootfs, undefined)).toThrow('unable to find user ghost: no matching entries in passwd file');
    expect(identity(pod({ runAsNonRoot: true }), container(), 'app', rootfs, undefined).uid).toBe(1001);
  });
});

describe('the image\'s /etc/passwd read inside its root', () => {
  it('follows symlinks as a chroot would: an absolute or climbing link never reaches the host\'s files', () => {
    const host = mkdtempSync(join(tmpdir(), 'oci-host-'));
    writeFileSync(join(host, 'passwd'), 'intruder:x:4242:4242::/:/bin/sh\n');
    const image = mkdtempSync(join(tmpdir(), 'oci-linked-'));
    mkdirSync(join(image, 'etc'));
    mkdirSync(join(image, 'usr', 'lib'), { recursive: true });
    writeFileSync(join(image, 'usr', 'lib', 'passwd'), 'app:x:1001:1002::/:/bin/sh\n');
    // The host's file by an absolute link, and by one that climbs: both stay in the image.
    symlinkSync(join(host, 'passwd'), join(image, 'etc', 'passwd'));
    expect(pathInRoot(image, '/etc/passwd')).toBe(join(image, host, 'passwd'));
    expect(() => identity(pod(), container(), 'intruder', image, undefined)).toThrow('unable to find user intruder');
    symlinkSync(`../../../../../../..${host}/passwd`, join(image, 'etc', 'group'));
    expect(pathInRoot(image, '/etc/group')).toBe(join(image, host, 'passwd'));
    // A link inside the image is followed.
    const inside = mkdtempSync(join(tmpdir(), 'oci-linked-'));
    mkdirSync(join(inside, 'etc'));
    mkdirSync(join(inside, 'usr', 'lib'), { recursive: true });
    writeFileSync(join(inside, 'usr', 'lib', 'passwd'), 'app:x:1001:1002::/:/bin/sh\n');
    symlinkSync('/usr/lib/passwd', join(inside, 'etc', 'passwd'));
    expect(identity(pod(), container(), 'app', inside, undefined)).toMatchObject({ uid: 1001, gid: 1002 });
    // A loop is an error, not a hang.
    symlinkSync('loop', join(inside, 'loop'));
    expect(() => pathInRoot(inside, '/loop')).toThrow('too many levels of symlinks');
  });
});

describe('security (capabilities, no_new_privs, seccomp, read-only root)', () => {
  const user = { uid: 1, gid: 1, additionalGids: [1] };
  it('containerd\'s default capabilities, then drop and add (CAP_ prefixes and case as the API allows); every one when privileged', () => {
    expect(security(pod(), container(), user).capabilities).toEqual(DefaultCapabilities);
    expect(security(pod(), container({ capabilities: { drop: ['ALL'], add: ['cap_net_bind_service'] } }), user).capabilities).toEqual(['NET_BIND_SERVICE']);
    expect(security(pod(), container({ capabilities: { drop: ['KILL'], add: ['SYS_TIME'] } }), user).capabilities).toEqual([...DefaultCapabilities.filter((c) => c !== 'KILL'), 'SYS_TIME']);
    const privileged = security(pod(), container({ privileged: true, seccompProfile: { type: 'RuntimeDefault' } }), user);
    expect(privileged).toMatchObject({ privileged: true, seccomp: false });
    expect(privileged.capabilities).toContain('SYS_ADMIN');
  });

  it('seccomp from the container or the pod (RuntimeDefault on, Unconfined or unset off); Localhost is refused', () => {
    expect(security(pod({ seccompProfile: { type: 'RuntimeDefault' } }), container(), user).seccomp).toBe(true);
    expect(security(pod({ seccompProfile: { type: 'RuntimeDefault' } }), container({ seccompProfile: { type: 'Unconfined' } }), user).seccomp).toBe(false);
    expect(security(pod(), container(), user)).toMatchObject({ seccomp: false, noNewPrivileges: false, readonlyRootfs: false });
    expect(security(pod(), container({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true }), user)).toMatchObject({ noNewPrivileges: true, readonlyRootfs: true });
    expect(() => security(pod(), container({ seccompProfile: { type: 'Localhost', localhostProfile: 'x.json' } }), user)).toThrow('seccomp profile type Localhost is not supported by this runtime');
  });
});

describe('cgroup resources', () => {
  it('v1: quota from limits.cpu, shares from requests.cpu (the limit when none), memory and swap, pids; v2: the unified files', () => {
    expect(cgroupResources({ limits: { cpu: '500m', memory: '64Mi' } }, false)).toEqual({ cpu: { shares: 512, period: 100000, quota: 50000 }, pids: { limit: 4096 }, memory: { limit: 67108864, swap: 67108864 } });
    expect(cgroupResources({ requests: { cpu: '250m' } }, false)).toEqual({ cpu: { shares: 256, period: 100000 }, pids: { limit: 4096 } });
    expect(cgroupResources({ limits: { cpu: '2', memory: '1Gi' } }, true)).toEqual({ unified: { 'cpu.weight': '79', 'cpu.max': '200000 100000', 'memory.max': '1073741824', 'memory.swap.max': '0', 'pids.max': '4096' } });
    expect(cgroupResources(undefined, true)).toEqual({ unified: { 'cpu.weight': '1', 'cpu.max': 'max 100000', 'pids.max': '4096' } });
  });

  it('malformed or zero quantities set nothing', () => {
    expect(cgroupResources({ limits: { cpu: 'lots', memory: '-1' }, requests: { cpu: '0' } }, false)).toEqual({ cpu: { shares: 2, period: 100000 }, pids: { limit: 4096 } });
  });
});

describe('bundleConfig', () => {
  const input = (extra: Partial<Parameters<typeof bundleConfig>[0]> = {}) => bundleConfig({
    args: ['sh'], env: ['A=1'], cwd: '/', hostname: 'p', mounts: [{ destination: '/data', source: '/host/data', readonly: true }],
    security: { user: { uid: 1, gid: 2, additionalGids: [2] }, capabilities: ['KILL'], noNewPrivileges: true, seccomp: true, privileged: false, readonlyRootfs: true },
    netns: '/run/netns/x', hostPID: false, hostIPC: false, resources: undefined, cgroupsPath: '/func-k/c', cgroupV2: false, ...extra,
  }) as { process: any; root: any; mounts: any[]; linux: any };

  it('runc\'s default layout, the pod\'s network namespace, masked paths, seccomp, devices denied', () => {
    const c = input();
    expect(c.process).toMatchObject({ user: { uid: 1, gid: 2, additionalGids: [2] }, noNewPrivileges: true, capabilities: { bounding: ['CAP_KILL'], effective: ['CAP_KILL'], permitted: ['CAP_KILL'] } });
    expect(c.root).toEqual({ path: 'rootfs', readonly: true });
    expect(c.mounts.map((m) => m.destination)).toEqual(['/proc', '/dev', '/dev/pts', '/dev/shm', '/dev/mqueue', '/sys', '/sys/fs/cgroup', '/data']);
    expect(c.mounts.at(-1)).toEqual({ destination: '/data', type: 'bind', source: '/host/data', options: ['rbind', 'rprivate', 'ro'] });
    expect(c.linux.namespaces).toEqual([{ type: 'mount' }, { type: 'uts' }, { type: 'pid' }, { type: 'ipc' }, { type: 'network', path: '/run/netns/x' }]);
    expect(c.linux.maskedPaths).toContain('/proc/kcore');
    expect(c.linux.readonlyPaths).toContain('/proc/sys');
    expect(c.linux.seccomp.syscalls[0].names).toEqual(expect.arrayContaining(['mount', 'kexec_load', 'bpf', 'ptrace', 'unshare', 'setns']));
    expect(c.linux.resources.devices).toEqual([{ allow: false, access: 'rwm' }]);
  });

  it('the host\'s namespaces only when asked (hostNetwork: no netns), and a privileged container unmasked with every device', () => {
    const c = input({ netns: undefined, hostPID: true, hostIPC: true, security: { user: { uid: 0, gid: 0, additionalGids: [] }, capabilities: [], noNewPrivileges: false, seccomp: false, privileged: true, readonlyRootfs: false } });
    expect(c.linux.namespaces).toEqual([{ type: 'mount' }, { type: 'uts' }]);
    expect(c.linux.maskedPaths).toBeUndefined();
    expect(c.linux.seccomp).toBeUndefined();
    expect(c.linux.resources.devices).toEqual([{ allow: true, access: 'rwm' }]);
  });
});

describe('the pod CIDR of an oci cluster and serve\'s flag', () => {
  it('a /16 of 10.0.0.0/8, the same for the same data dir, free of the host\'s routes', () => {
    const cidr = privatePodCidr('/srv/data');
    expect(cidr).toMatch(/^10\.\d{1,3}\.0\.0\/16$/);
    expect(privatePodCidr('/srv/data')).toBe(cidr);
  });

  it('--container-runtime takes oci, process or simulated; anything else is refused', () => {
    expect(resolveConfig({ 'container-runtime': 'oci' }, {}, '/srv').containerRuntime).toBe('oci');
    expect(resolveConfig({}, { CLUSTER_API_CONTAINER_RUNTIME: 'simulated' }, '/srv').containerRuntime).toBe('simulated');
    expect(() => resolveConfig({ 'container-runtime': 'docker' }, {}, '/srv')).toThrow(ConfigError);
    expect(() => resolveConfig({ 'container-runtime': 'docker' }, {}, '/srv')).toThrow('--container-runtime must be oci, process or simulated, got docker');
  });
});

describe('chooseContainerRuntime (serve\'s --container-runtime)', () => {
  const host = () => ({ host: { runc: '/usr/sbin/runc', conmon: '/usr/bin/conmon', cniPath: '/usr/lib/cni', cgroupV2: false, version: '1.1.5' } });
  const lacking = () => ({ missing: ['root (the agent must run as root to create namespaces and cgroups)', 'runc'] });
  const never = () => {
    throw new Error('not asked');
  };

  it('by default oci where the machine can, else process with a warning naming what is not isolated and what is missing', () => {
    expect(chooseContainerRuntime(undefined, host)).toEqual({ runtime: 'oci' });
    const fallback = chooseContainerRuntime(undefined, lacking);
    expect(fallback.runtime).toBe('process');
    expect(fallback.warning).toBe('pods run as processes, not isolated: they share the agent\'s uid, filesystem and network namespace, their securityContext is not applied and their limits are not enforced (the oci runtime needs root (the agent must run as root to create namespaces and cgroups); runc)');
  });

  it('process and simulated as asked without looking at the machine; oci asked where it cannot run is an error', () => {
    expect(chooseContainerRuntime('process', never)).toEqual({ runtime: 'process' });
    expect(chooseContainerRuntime('simulated', never)).toEqual({ runtime: 'simulated' });
    expect(() => chooseContainerRuntime('oci', lacking)).toThrow('--container-runtime oci cannot run here: missing root');
  });

  it('a loopback cluster CIDR gives way to a private one; any other is kept', () => {
    expect(bridgeableCidr('127.64.0.0/10', '/srv/data')).toBe(privatePodCidr('/srv/data'));
    expect(bridgeableCidr('172.20.0.0/16', '/srv/data')).toBe('172.20.0.0/16');
  });

  it('a loopback Service range gives way to a private /16 outside the pods\' CIDR; any other is kept', () => {
    const pods = privatePodCidr('/srv/data');
    const services = reachableServiceCidr('127.128.0.0/12', pods, '/srv/data');
    expect(services).toMatch(/^10\.\d{1,3}\.0\.0\/16$/);
    expect(rangesOverlap(services, pods)).toBe(false);
    expect(reachableServiceCidr('127.128.0.0/12', pods, '/srv/data')).toBe(services);
    // A pod CIDR covering all of 10.0.0.0/8 leaves no /16 to pick.
    expect(() => reachableServiceCidr('127.128.0.0/12', '10.0.0.0/8', '/srv/data')).toThrow('no /16 of 10.0.0.0/8 outside 10.0.0.0/8');
    expect(reachableServiceCidr('10.96.0.0/12', pods, '/srv/data')).toBe('10.96.0.0/12');
  });
});
