/**
 * Pod networks made ahead of need, so a pod's sandbox starts without waiting for one: a few
 * (`size`) network namespaces with CNI ADD done (lo up, eth0 on the node's bridge with an address
 * of the node's pod CIDR), made one at a time in the background. A sandbox takes one when the
 * pod's network needs nothing of the pod at ADD time: not hostNetwork (no namespace at all) and no
 * hostPorts (portmap's mappings are arguments of the ADD). The plugins here are given no pod
 * arguments (no K8S_POD_NAME), so a pooled network is any pod's; CNI_CONTAINERID is the pool
 * entry's id, which host-local records with the address, and which becomes the sandbox's id: the
 * sandbox's CNI DEL, with that same id, releases the address and the namespace.
 *
 * Each entry is recorded (state.ts) from before its ADD until a sandbox has it or it is released,
 * so a restarted agent releases (CNI DEL, namespace removed) what an earlier run pooled and no
 * sandbox took: no address or namespace is left behind.
 */
import type { PodNetworks } from './cni.js';
import { newId } from '../records.js';
import type { PooledRecord, RuntimeState } from './state.js';

export interface PooledNetwork {
  id: string;
  cidr: string;
  ip: string;
  netns: string;
}

export interface SandboxPoolOptions {
  networks: PodNetworks;
  state: RuntimeState;
  /** How many networks are kept ready (0: none). */
  size: number;
  /** The node's pod CIDR, once known (a loopback or missing one: nothing is made). */
  cidr(): string | undefined;
  /** How long after a network is taken the pool is refilled (default 500 ms: the taker's own start, runc's and its process's, goes first). */
  refillDelayMs?: number;
}

export class SandboxPool {
  private readonly ready: PooledNetwork[] = [];
  private filling?: Promise<void>;
  private closed = false;

  constructor(private readonly opts: SandboxPoolOptions) {}

  /** The networks ready to be taken. */
  get entries(): readonly PooledNetwork[] {
    return this.ready;
  }

  /** A ready network of `cidr`, no longer the pool's (the caller records it as its sandbox's, then calls taken); the pool is refilled shortly after. */
  take(cidr: string): PooledNetwork | undefined {
    const i = this.ready.findIndex((e) => e.cidr === cidr);
    if (i < 0) return undefined;
    setTimeout(() => void this.fill(), this.opts.refillDelayMs ?? 500).unref();
    return this.ready.splice(i, 1)[0];
  }

  /** The taken network is recorded as a sandbox's: the pool forgets its own record. */
  taken(entry: PooledNetwork): void {
    this.opts.state.forgetPooled(entry.id);
  }

  /**
   * Makes networks, one at a time, until `size` are ready; one fill at a time (a call while one
   * runs gets that one). A failure (the ADD, or its record's write) ends the fill, leaving the pool
   * short until the next; it never rejects (nothing waits on a fill to fail).
   */
  fill(): Promise<void> {
    this.filling ??= this.fillUp().catch(() => undefined).finally(() => (this.filling = undefined));
    return this.filling;
  }

  private async fillUp(): Promise<void> {
    for (let cidr = this.opts.cidr(); !this.closed && cidr && !cidr.startsWith('127.') && this.ready.length < this.opts.size; cidr = this.opts.cidr()) {
      const record: PooledRecord = { id: newId(), cidr };
      this.opts.state.savePooled(record);
      let added: { ip: string; netns: string };
      try {
        added = await this.opts.networks.add(record.id, cidr, []);
      } catch {
        // add undid what it did.
        this.opts.state.forgetPooled(record.id);
        return;
      }
      const entry = { ...record, ...added };
      this.opts.state.savePooled(entry);
      this.ready.push(entry);
    }
  }

  /** No more fills; the one running finishes, then every ready network is released. */
  async close(): Promise<void> {
    this.closed = true;
    await this.filling;
    for (const e of this.ready.splice(0)) await this.release(e);
  }

  /** What an earlier run pooled is released, but for what a sandbox of `inUse` has (recorded as that sandbox's: only the pool's record goes). */
  async recover(inUse: ReadonlySet<string>): Promise<void> {
    for (const record of this.opts.state.pooled()) {
      if (inUse.has(record.id)) this.opts.state.forgetPooled(record.id);
      else await this.release(record);
    }
  }

  private async release(record: PooledRecord): Promise<void> {
    await this.opts.networks.del(record.id, record.cidr, []);
    this.opts.state.forgetPooled(record.id);
  }
}
