/**
 * Where `func-runtime` listens and who holds a port it cannot have.
 *
 * On a developer's machine a function serves on the loopback address only (as Vite and wrangler
 * do): nothing on the network reaches it, and it does not take the port from every address (a
 * pod of the local cluster listening on its own address keeps its port). In a container or a pod
 * (Knative's `K_SERVICE`, the `KUBERNETES_SERVICE_HOST` every pod gets, a Docker or Podman marker
 * file) it serves on all addresses, as it must to be reached. `--host` / `FUNC_HOST` decide
 * otherwise in both.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

type Env = Record<string, string | undefined>;

const ContainerMarkers = ['/.dockerenv', '/run/.containerenv'];

/** Whether this process runs in a container or a pod. */
export const inContainer = (env: Env = process.env, exists: (path: string) => boolean = existsSync): boolean =>
  Boolean(env.K_SERVICE || env.KUBERNETES_SERVICE_HOST) || ContainerMarkers.some(exists);

/** The address the commands listen on when none is given: all addresses in a container, else the IPv4 loopback. */
export const defaultListenHost = (env: Env = process.env, exists?: (path: string) => boolean): string => (inContainer(env, exists) ? '' : '127.0.0.1');

export interface PortHolder {
  pid: number;
  command: string;
}

/** The socket inodes listening on `port` (TCP state 0A) in /proc/net/tcp and tcp6. */
const listeningInodes = (port: number, proc: string): Set<string> => {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`${proc}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && f[3] === '0A' && f[1]?.endsWith(`:${hex}`) && f[9] !== '0') inodes.add(f[9]!);
    }
  }
  return inodes;
};

/**
 * The process listening on `port`, found as `ss -p` finds it (Linux /proc: the socket's inode, then
 * the process with a descriptor on it); undefined elsewhere or when the process is not ours to see.
 */
export function portHolder(port: number, proc = '/proc'): PortHolder | undefined {
  const inodes = listeningInodes(port, proc);
  if (inodes.size === 0) return undefined;
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`${proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (!m || !inodes.has(m[1]!)) continue;
      let command = '';
      try {
        command = readFileSync(`${proc}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      } catch { /* gone meanwhile */ }
      return { pid: Number(pid), command };
    }
  }
  return undefined;
}

/** "by pid 12 (node …)", naming the local cluster when it is one; '' when unknown. */
export const describeHolder = (holder: PortHolder | undefined): string => {
  if (!holder) return '';
  const command = holder.command.length > 120 ? `${holder.command.slice(0, 117)}...` : holder.command;
  const cluster = /cluster-api(\.js)?\b.*\b(serve|node)\b/.test(holder.command) ? ': the local cluster (a pod it runs, or the cluster itself)' : '';
  return ` by pid ${holder.pid} (${command || 'unknown command'})${cluster}`;
};
