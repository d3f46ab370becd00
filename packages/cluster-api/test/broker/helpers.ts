/** Real HTTP subscribers on 127.0.0.1 and small builders for the broker tests. */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Broker, Trigger } from '../../src/broker/types.js';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly path: string;
}

/** How the subscriber answers request number `n` (0-based). */
export type Responder = (req: Received, n: number, res: ServerResponse) => void;

export const accept: Responder = (_r, _n, res) => void res.writeHead(202).end();

export interface Subscriber {
  readonly url: string;
  readonly received: Received[];
  respond: Responder;
  /** Resolves once `n` requests arrived (fails after `ms`). */
  until(n: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function subscriber(respond: Responder = accept): Promise<Subscriber> {
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  let server: Server;
  const sub: Subscriber = {
    url: '',
    received,
    respond,
    until: (n, ms = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < n) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(received.slice());
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`subscriber got ${received.length} of ${n} requests`));
        }, ms);
        waiters.add(check);
        check();
      }),
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks), path: req.url ?? '/' };
      const n = received.length;
      received.push(r);
      sub.respond(r, n, res);
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  (sub as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return sub;
}

export function broker(name: string, spec: Broker['spec'] = {}, namespace = 'ns'): Broker {
  return { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', metadata: { namespace, name }, spec };
}

export function trigger(name: string, spec: Partial<Trigger['spec']> & { subscriber: Trigger['spec']['subscriber'] }, namespace = 'ns'): Trigger {
  return { apiVersion: 'eventing.knative.dev/v1', kind: 'Trigger', metadata: { namespace, name, uid: `uid-${name}` }, spec: { broker: 'default', ...spec } };
}

let seq = 0;
/** A binary-mode CloudEvent request. */
export function binaryEvent(attrs: Record<string, string> = {}, data = '{"hello":"world"}'): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      'ce-specversion': '1.0',
      'ce-id': attrs.id ?? `e-${process.pid}-${seq++}`,
      'ce-source': attrs.source ?? '/test',
      'ce-type': attrs.type ?? 'com.example.test',
      'content-type': 'application/json',
      ...Object.fromEntries(Object.entries(attrs).filter(([k]) => !['id', 'source', 'type'].includes(k)).map(([k, v]) => [`ce-${k}`, v])),
    },
    body: data,
  };
}

export async function post(url: string, headers: Record<string, string>, body: string | Buffer): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(url, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
