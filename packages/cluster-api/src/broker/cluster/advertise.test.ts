import { describe, expect, it } from 'vitest';
import { ingressBase, parseAdvertised, reachableHost } from './advertise.js';

describe('the advertised ingress address', () => {
  it.each([
    ['broker.example.com', { host: 'broker.example.com' }],
    ['10.0.0.5:8090', { host: '10.0.0.5', port: 8090 }],
    ['localhost:80', { host: 'localhost', port: 80 }],
    ['[::1]', { host: '::1' }],
    ['[fd00::1]:9000', { host: 'fd00::1', port: 9000 }],
    ['::1', { host: '::1' }],
  ])('reads %s', (raw, want) => expect(parseAdvertised(raw)).toEqual(want));

  it.each(['http://x', 'a b', 'host:', 'host:0', 'host:70000', '[notv6]', '-bad.example', ''])('refuses %j', (raw) => {
    expect(() => parseAdvertised(raw)).toThrow(/host/);
  });

  it('names the port bound unless a port is advertised, and a reachable host for wildcard binds', () => {
    expect(ingressBase(undefined, '0.0.0.0')(8090)).toBe('http://127.0.0.1:8090');
    expect(ingressBase(undefined, '::')(1)).toBe('http://[::1]:1');
    expect(ingressBase(parseAdvertised('lb.local:80'), '127.0.0.1')(41000)).toBe('http://lb.local:80');
    expect(ingressBase(parseAdvertised('fd00::2'), '0.0.0.0')(5)).toBe('http://[fd00::2]:5');
    expect(reachableHost('10.1.2.3')).toBe('10.1.2.3');
  });
});
