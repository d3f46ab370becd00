/**
 * The address Brokers' `status.address.url` names: `http://<host>:<port>/<namespace>/<broker>`.
 * The bind address is not always one a client can reach (0.0.0.0), and several broker processes
 * behind one address must advertise that one, so it is configurable as `host` or `host:port`.
 */
import { isIP } from 'node:net';

export interface Advertised {
  readonly host: string;
  /** Absent: the port the ingress bound. */
  readonly port?: number;
}

const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host`, `host:port`, `[v6]` or `[v6]:port`; throws a message naming what is wrong. */
export function parseAdvertised(raw: string): Advertised {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(raw.trim()) ?? (isIP(raw) === 6 ? [raw, raw, undefined, undefined] : null);
  const host = m?.[1] ?? m?.[2];
  if (!m || !host || (m[1] !== undefined ? isIP(host) !== 6 : !(isIP(host) === 4 || HOST.test(host))))
    throw new Error(`"${raw}" is not a host or host:port (e.g. broker.example.com, 192.168.1.10:8090, [::1])`);
  const port = m[3] === undefined ? undefined : Number(m[3]);
  if (port !== undefined && (port < 1 || port > 65535)) throw new Error(`"${raw}": the port must be 1-65535`);
  return { host, ...(port === undefined ? {} : { port }) };
}

/** What a client dials for a bind address: a wildcard one is reached on loopback. */
export function reachableHost(bind: string): string {
  if (bind === '0.0.0.0' || bind === '') return '127.0.0.1';
  if (bind === '::') return '::1';
  return bind;
}

/** The ingress base URL for the port bound. */
export function ingressBase(advertised: Advertised | undefined, bind: string): (port: number) => string {
  const host = advertised?.host ?? reachableHost(bind);
  const shown = isIP(host) === 6 ? `[${host}]` : host;
  return (port) => `http://${shown}:${advertised?.port ?? port}`;
}
