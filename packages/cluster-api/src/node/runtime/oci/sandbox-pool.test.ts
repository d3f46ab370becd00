/**
 * The pool of pod networks on a real machine (root, the CNI plugins): namespaces with CNI ADD done
 * ahead of need, taken, refilled, released on close, and released by a new run after a crash, with
 * host-local's address records and the namespaces checked on the host.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ociSupport } from './host.js';
import { PodNetworks } from './cni.js';
import { privatePodCidr } from './pod-cidr.js';
import { SandboxPool } from './sandbox-pool.js';
import { RuntimeState } from './state.js';

const support = ociSupport();
const missing = 'missing' in support ? support.missing.join('; ') : undefined;

describe.skipIf(missing)(`the pool of pod networks${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'oci-pool-'));
  const key = process.pid.toString(16).slice(-6);
  const name = `fpool${key}`;
  const cidr = privatePodCidr(dir).replace(/\.0\.0\/16$/, '.0.0/24');
  const networks = missing ? undefined! : new PodNetworks({ cniPath: (support as { host: { cniPath: string } }).host.cniPath, name, bridge: `fpb${key}`, ipamDir: join(dir, 'ipam') });
  const state = new RuntimeState(dir, join(dir, 'containers'));
  const pool = (size: number, at = () => cidr as string | undefined) => new SandboxPool({ networks, state, size, cidr: at });

  /** This network's namespaces on the host. */
  const namespaces = () => execFileSync('ip', ['netns', 'list']).toString().split('\n').map((l) => l.split(' ')[0]!).filter((n) => n.startsWith(`${name}-`)).sort();
  /** host-local's records: address → the container id it was given to. */
  const addresses = (): Record<string, string> => {
    const d = join(dir, 'ipam', name);
    let names: string[] = [];
    try {
      names = readdirSync(d).filter((n) => /^\d+\.\d+\.\d+\.\d+$/.test(n));
    } catch {
      /* none yet */
    }
    return Object.fromEntries(names.map((n) => [n, readFileSync(join(d, n), 'utf8').split(/\r?\n/)[0]!]));
  };
  /** What a server listening in the namespace `ns` (port 0) answers the host at `ip`. */
  const answerIn = async (ns: string, ip: string): Promise<string> => {
    const server = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', 'const s = require("net").createServer((c) => c.end("from the pool")).listen(0, () => console.log(s.address().port))'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [line] = (await once(server.stdout!, 'data')) as [Buffer];
      const socket = connect(Number(line.toString().trim()), ip);
      socket.setEncoding('utf8');
      let text = '';
      for await (const chunk of socket) text += chunk;
      return text;
    } finally {
      server.kill();
    }
  };
  const recorded = () => state.pooled().map((r) => r.id).sort();

  afterAll(async () => {
    await networks.clear();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes `size` networks ahead, each an address of the CIDR held by its own id and a namespace where that address answers; one taken is replaced', async () => {
    const p = pool(2);
    await p.fill();
    const [a, b] = p.entries;
    expect(p.entries).toHaveLength(2);
    expect(a!.ip.startsWith(cidr.split('.').slice(0, 3).join('.') + '.')).toBe(true);
    expect(addresses()).toEqual({ [a!.ip]: a!.id, [b!.ip]: b!.id });
    expect(namespaces()).toEqual([networks.netnsName(a!.id), networks.netnsName(b!.id)].sort());
    expect(recorded()).toEqual([a!.id, b!.id].sort());
    // The address is up in its namespace: a server there answers the host over the bridge.
    expect(await answerIn(networks.netnsName(a!.id), a!.ip)).toBe('from the pool');

    // Another CIDR's pod gets none; this CIDR's gets the first, and the pool makes one more.
    expect(p.take('10.255.255.0/24')).toBeUndefined();
    const taken = p.take(cidr)!;
    expect(taken).toEqual(a);
    p.taken(taken);
    expect(recorded()).toEqual([b!.id]);
    await p.fill();
    expect(p.entries).toHaveLength(2);
    const c = p.entries[1]!;
    expect(c.id).not.toBe(a!.id);
    expect(Object.keys(addresses())).toHaveLength(3);

    // The taken one is released by its own id, as its sandbox's stop does: its address and namespace go.
    await networks.del(taken.id, cidr, []);
    expect(addresses()).toEqual({ [b!.ip]: b!.id, [c.ip]: c.id });
    await p.close();
    expect(namespaces()).toEqual([]);
    expect(addresses()).toEqual({});
    expect(recorded()).toEqual([]);
    // Closed: a fill makes nothing.
    await p.fill();
    expect(namespaces()).toEqual([]);
  });

  it('makes nothing without a pod CIDR, or with a loopback one; size 0 makes nothing', async () => {
    for (const p of [pool(2, () => undefined), pool(2, () => '127.64.0.0/24'), pool(0)]) {
      await p.fill();
      expect(p.entries).toHaveLength(0);
      await p.close();
    }
    expect(namespaces()).toEqual([]);
    expect(recorded()).toEqual([]);
  });

  it('a failed ADD (a CIDR host-local refuses) leaves no namespace, address or record behind, and the pool short', async () => {
    const p = pool(2, () => 'not-a-cidr');
    await p.fill();
    expect(p.entries).toHaveLength(0);
    expect(namespaces()).toEqual([]);
    expect(recorded()).toEqual([]);
    await p.close();
  });

  it('a record that cannot be written (the pool\'s directory a file) ends the fill without an error: nothing is made', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'oci-pool-broken-'));
    writeFileSync(join(broken, 'pool'), 'not a directory');
    const p = new SandboxPool({ networks, state: new RuntimeState(broken, join(broken, 'containers')), size: 2, cidr: () => cidr });
    await expect(p.fill()).resolves.toBeUndefined();
    expect(p.entries).toHaveLength(0);
    expect(namespaces()).toEqual([]);
    await p.close();
    rmSync(broken, { recursive: true, force: true });
  });

  it('a new run releases what a crashed run pooled (ready, or recorded before its ADD), but keeps what a sandbox took', async () => {
    const crashed = pool(3);
    await crashed.fill();
    const [kept, stale] = crashed.entries;
    // The crash came as a sandbox had recorded the first as its own, before the pool forgot it; and before another's ADD.
    state.savePooled({ id: 'f'.repeat(64), cidr });
    expect(recorded()).toHaveLength(4);
    const next = pool(2);
    await next.recover(new Set([kept!.id]));
    expect(recorded()).toEqual([]);
    expect(namespaces()).toEqual([networks.netnsName(kept!.id)]);
    expect(addresses()).toEqual({ [kept!.ip]: kept!.id });
    expect(Object.values(addresses())).not.toContain(stale!.id);
    await networks.del(kept!.id, cidr, []);
    expect(namespaces()).toEqual([]);
    expect(addresses()).toEqual({});
  });
});
