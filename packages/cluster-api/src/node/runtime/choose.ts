/**
 * Which runtime a node runs its pods with (`serve --container-runtime`): `oci` when asked, or by
 * default when this machine can (runc, conmon, the CNI plugins, root, namespaces: oci/host.ts);
 * else `process`, with a warning naming what is then not isolated and why; `simulated` runs every
 * image as kwok does. An oci node needs a pod CIDR it can put on a bridge: the loopback default
 * (127.64.0.0/10) gives way to a private /16 picked for the data directory (oci/pod-cidr.ts), and so
 * does the loopback Service range (127.128.0.0/12): a pod's 127.0.0.0/8 is its own loopback.
 */
import { ociSupport } from './oci/host.js';
import { privatePodCidr } from './oci/pod-cidr.js';
import { rangesOverlap } from '../../registry/kinds/service-allocator.js';

export type ContainerRuntimeName = 'oci' | 'process' | 'simulated';

export interface ChosenRuntime {
  runtime: ContainerRuntimeName;
  /** A start-up warning, when the default fell back to processes. */
  warning?: string;
}

/** `support`: what this machine has for the oci runtime (asked of it only when needed). */
export function chooseContainerRuntime(asked: ContainerRuntimeName | undefined, support: () => ReturnType<typeof ociSupport> = ociSupport): ChosenRuntime {
  if (asked === 'process' || asked === 'simulated') return { runtime: asked };
  const found = support();
  if ('host' in found) return { runtime: 'oci' };
  if (asked === 'oci') throw new Error(`--container-runtime oci cannot run here: missing ${found.missing.join('; ')}`);
  return {
    runtime: 'process',
    warning: `pods run as processes, not isolated: they share the agent's uid, filesystem and network namespace, their securityContext is not applied and their limits are not enforced (the oci runtime needs ${found.missing.join('; ')})`,
  };
}

/** The cluster CIDR an oci node can use: the one given, unless it is loopback (then a private /16 for this data directory). */
export const bridgeableCidr = (cidr: string, dataDir: string): string => (cidr.startsWith('127.') ? privatePodCidr(dataDir) : cidr);

/** The Service range an oci node's pods can reach: the one given, unless it is loopback (then another private /16 for this data directory, not the pods'). */
export function reachableServiceCidr(range: string, podCidr: string, dataDir: string): string {
  if (!range.startsWith('127.')) return range;
  for (let i = 0; i < 256; i++) {
    const picked = privatePodCidr(`${dataDir}#services${i}`);
    if (!rangesOverlap(picked, podCidr)) return picked;
  }
  throw new Error(`no /16 of 10.0.0.0/8 outside ${podCidr} is free of this machine's routes`);
}
