/**
 * The RuntimeDefault seccomp profile of this runtime, modelled on the container runtimes' default
 * profile: every system call is allowed except those that reach past the container — mounting,
 * loading kernels and modules, BPF, tracing other processes, keyrings, the clock, swap, reboot,
 * entering or making namespaces, handles to host files — which fail with EPERM. (The runtimes'
 * default is an allow-list that also grants some of these with CAP_SYS_ADMIN; here a privileged
 * container runs unconfined instead.)
 */
export const Blocked = [
  'acct', 'add_key', 'adjtimex', 'bpf', 'clock_adjtime', 'clock_settime', 'create_module', 'delete_module', 'finit_module',
  'fsconfig', 'fsmount', 'fsopen', 'fspick', 'get_kernel_syms', 'get_mempolicy', 'init_module', 'ioperm', 'iopl', 'kcmp',
  'kexec_file_load', 'kexec_load', 'keyctl', 'lookup_dcookie', 'mbind', 'mount', 'mount_setattr', 'move_mount', 'move_pages',
  'name_to_handle_at', 'nfsservctl', 'open_by_handle_at', 'open_tree', 'perf_event_open', 'pivot_root', 'process_vm_readv',
  'process_vm_writev', 'ptrace', 'query_module', 'quotactl', 'reboot', 'request_key', 'set_mempolicy', 'setns', 'settimeofday',
  'swapoff', 'swapon', 'syslog', 'umount', 'umount2', 'unshare', 'uselib', 'userfaultfd', 'ustat', 'vhangup',
] as const;

const Architectures: Record<string, string[]> = {
  x64: ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32'],
  arm64: ['SCMP_ARCH_AARCH64', 'SCMP_ARCH_ARM'],
};

/** The profile in the OCI runtime spec's `linux.seccomp` form. */
export const runtimeDefaultSeccomp = () => ({
  defaultAction: 'SCMP_ACT_ALLOW',
  architectures: Architectures[process.arch] ?? [],
  syscalls: [{ names: [...Blocked], action: 'SCMP_ACT_ERRNO', errnoRet: 1 }],
});
