/**
 * The admission chain: every plugin's mutating step in order, then every validating step in order,
 * as kube-apiserver runs its chain. The order is the list's (plugins.ts), kube-apiserver's own
 * recommended order with OpenShift's plugins where OpenShift puts them.
 */
import type { AdmissionPlugin, AdmissionRequest } from './plugin.js';

export class AdmissionChain {
  constructor(readonly plugins: readonly AdmissionPlugin[]) {}

  /** Runs the chain on a write; resolves to whether a mutating step changed the object. */
  async admit(req: AdmissionRequest): Promise<boolean> {
    const applicable = this.plugins.filter((p) => p.handles(req));
    if (applicable.length === 0) return false;
    let mutated = false;
    for (const p of applicable) if (p.mutate && (await p.mutate(req))) mutated = true;
    for (const p of applicable) await p.validate?.(req);
    return mutated;
  }
}
