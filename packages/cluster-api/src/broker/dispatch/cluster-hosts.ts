/**
 * Cluster-local addresses from outside the cluster's network: a Knative Service's (and a Route's)
 * `status.address.url` is `http://<name>.<ns>.svc.cluster.local`, which only cluster DNS answers, and
 * the broker runs on the host. Such a URL is sent to the serving gateway instead, with the cluster-
 * local name as its Host (the gateway routes Routes' cluster-local names, as Knative's local gateway
 * does), so a Trigger or a source whose sink is a Knative Service reaches it — and wakes it at zero
 * through the activator — as it would in a cluster.
 */

/** Where a request for a URL is really sent, and the Host it carries. */
export interface Routed {
  readonly connect: URL;
  readonly host: string;
}

export type Router = (target: URL) => Routed | undefined;

/** `<name>.<ns>.svc.cluster.local` and its `.svc` short form. */
export const isClusterLocal = (hostname: string): boolean => /^[^.]+\.[^.]+\.svc(\.cluster\.local)?\.?$/i.test(hostname);

/** Cluster-local URLs to the gateway at `gatewayUrl()` (none while it is not running: then sent as they are). */
export function gatewayRouter(gatewayUrl: () => string | undefined): Router {
  return (target) => {
    const gateway = isClusterLocal(target.hostname) ? gatewayUrl() : undefined;
    if (!gateway) return undefined;
    const connect = new URL(`${target.pathname}${target.search}`, gateway);
    return { connect, host: target.host };
  };
}
