/**
 * Pods of the process runtime listen on loopback pod IPs, and every `cluster-api serve` on this
 * machine hands out the same first block of 127.64.0.0/10 by default: two test clusters running at
 * once would give two pods the same address and port. A test cluster that runs pods takes a /16 of
 * its own (CLUSTER_API_CLUSTER_CIDR, which the spawned serve reads).
 */
export function ownPodCidr(env: NodeJS.ProcessEnv = process.env): void {
  env.CLUSTER_API_CLUSTER_CIDR ??= `127.${64 + Math.floor(Math.random() * 64)}.0.0/16`;
}
