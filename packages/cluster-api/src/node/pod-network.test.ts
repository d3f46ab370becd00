import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseCidr, PodNetwork } from './pod-network.js';

describe('PodNetwork', () => {
  it('hands out the block\'s addresses round-robin, not reusing a freed one at once', async () => {
    const net = new PodNetwork('loopback', '127.0.0.1');
    net.setCidr('127.64.16.0/30');
    await net.ready;
    expect([net.allocate('a'), net.allocate('b')]).toEqual(['127.64.16.1', '127.64.16.2']);
    expect(net.allocate('a')).toBe('127.64.16.1');
    net.release('a');
    expect(() => net.allocate('c')).not.toThrow();
    expect(() => net.allocate('d')).toThrow(/no pod IP left/);
    expect(net.target('b', 8080)).toEqual({ host: '127.64.16.2', port: 8080 });
  });

  it('skips an address where something else on the machine already listens on a pod port (another cluster\'s pod), for a while', async () => {
    const block = `127.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 250)}.0/29`;
    const net = new PodNetwork('loopback', '127.0.0.1');
    net.setCidr(block);
    const first = block.replace(/\.0\/29$/, '.1');
    const squatter = createServer();
    await new Promise<void>((resolve) => squatter.listen(0, first, resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      const ip = await net.allocateFree('a', [port]);
      expect(ip).toBe(block.replace(/\.0\/29$/, '.2'));
      // Held: the next pod does not get it either, though the round-robin cursor comes back to it.
      net.release('a');
      const next = [await net.allocateFree('b', [port]), await net.allocateFree('c', [port]), await net.allocateFree('d', [port]), await net.allocateFree('e', [port])];
      expect(next).not.toContain(first);
      expect(await net.allocateFree('b', [port])).toBe(next[0]);
    } finally {
      squatter.close();
    }
  });

  it('shared mode: every pod at the node\'s address, each container port at a port of its own', async () => {
    const net = new PodNetwork('shared', '127.0.0.1');
    expect(net.allocate('a')).toBe('127.0.0.1');
    const port = await net.hostPort('a', 8080);
    expect(port).not.toBe(8080);
    expect(net.target('a', 8080)).toEqual({ host: '127.0.0.1', port });
    expect(await net.hostPort('b', 8080)).not.toBe(port);
  });

  it('refuses a malformed CIDR', () => {
    expect(() => parseCidr('127.64.0.0')).toThrow(/invalid CIDR/);
    expect(() => parseCidr('300.1.1.1/8')).toThrow(/invalid CIDR/);
  });
});
