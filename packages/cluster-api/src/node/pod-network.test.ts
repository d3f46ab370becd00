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
