/**
 * A cluster CIDR for pods on a bridge: a /16 of 10.0.0.0/8 picked by a hash of the cluster's data
 * directory (so two clusters on one machine start from different blocks), moved on past any block
 * a route of this machine already covers (another cluster's bridge, a VPN, the LAN).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** The machine's IPv4 routes as [network, mask] numbers (from /proc/net/route, little-endian hex). */
function routes(): [number, number][] {
  let text = '';
  try {
    text = readFileSync('/proc/net/route', 'utf8');
  } catch {
    return [];
  }
  const le = (hex: string) => Buffer.from(hex, 'hex').readUInt32LE(0);
  return text.split('\n').slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length > 7).map((f) => [le(f[1]!), le(f[7]!)] as [number, number]).filter(([, mask]) => mask !== 0);
}

export function privatePodCidr(seed: string): string {
  const taken = routes();
  const start = createHash('sha256').update(seed).digest().readUInt8(0);
  for (let i = 0; i < 256; i++) {
    const second = (start + i) % 256;
    const net = ((10 << 24) | (second << 16)) >>> 0;
    const mask = 0xffff0000;
    if (taken.some(([n, m]) => ((n & m & mask) >>> 0) === ((net & m & mask) >>> 0))) continue;
    return `10.${second}.0.0/16`;
  }
  throw new Error('no /16 of 10.0.0.0/8 is free of this machine\'s routes');
}
