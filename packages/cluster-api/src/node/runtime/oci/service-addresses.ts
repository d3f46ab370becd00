/**
 * The host's own addresses for Service clusterIPs outside loopback, as kube-proxy's IPVS mode binds
 * every clusterIP to its `kube-ipvs0` interface: each is a /32 on the host's `lo`, labelled
 * `lo:<node key>` so that one flush removes every address of this node (what an earlier run left,
 * and everything at the agent's stop). The node's service proxy then listens on `clusterIP:port`, and
 * a pod reaches it through its default route (the node's bridge): no NAT rule, nothing per pod.
 * A loopback clusterIP needs none of this, and is not reachable from a pod's network namespace.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export class ServiceAddresses {
  private flushed?: Promise<void>;

  /** `label`: `lo:` and at most 12 characters (an interface label is at most 15). */
  constructor(readonly label: string) {}

  /** Makes `ip` an address of this host (what an earlier run of this node left goes first). */
  async add(ip: string): Promise<void> {
    await (this.flushed ??= this.clear());
    await run('ip', ['addr', 'replace', `${ip}/32`, 'dev', 'lo', 'label', this.label]);
  }

  async remove(ip: string): Promise<void> {
    await run('ip', ['addr', 'del', `${ip}/32`, 'dev', 'lo']).catch(() => undefined);
  }

  /** Every address of this node goes. */
  async clear(): Promise<void> {
    await run('ip', ['addr', 'flush', 'dev', 'lo', 'label', this.label]).catch(() => undefined);
  }
}
