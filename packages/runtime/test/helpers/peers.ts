/**
 * faas-js-runtime 4 and this runtime side by side: each serves the same function on its own free
 * port, and a request's observable answer is compared.
 */
import type { Server } from 'node:http';
import faas from 'faas-js-runtime';
import { freePort } from '../dev-helpers.js';
import { start as ours } from '../../src/index.js';
import type { FunctionModule, StartOptions } from '../../src/types.js';

// faas-js-runtime is CommonJS without named-export hints, so Node's ESM loader needs the default import.
const { start: theirs } = faas as { start: (fn: unknown, options: Record<string, unknown>) => Promise<Server> };

export type AnyFn = FunctionModule | ((...args: never[]) => unknown);
export interface Observation { status: number; type: string | null; body: string; headers: Record<string, string | null> }

export { freePort };

const servers: Server[] = [];

/** Closes every server serveWith() started; call it from afterEach. */
export function closeServers(): void {
  for (const s of servers.splice(0)) { s.closeAllConnections(); s.close(); }
}

export async function serveWith(runtime: 'faas' | 'ours', fn: AnyFn, options: StartOptions & Record<string, unknown> = {}): Promise<string> {
  const port = await freePort();
  // faas-js-runtime treats port 0 as "unset" (8080), so both get an explicit free port.
  const server = runtime === 'faas'
    ? await theirs(fn, { port, logLevel: 'silent', ...options })
    : await ours(fn as FunctionModule, { port, host: '127.0.0.1', logLevel: 'silent', ...options });
  servers.push(server);
  return `http://127.0.0.1:${port}`;
}

export async function observe(res: Response, headerNames: string[] = []): Promise<Observation> {
  const headers: Record<string, string | null> = {};
  for (const h of headerNames) headers[h] = res.headers.get(h);
  return { status: res.status, type: res.headers.get('content-type')?.split(';')[0] ?? null, body: await res.text(), headers };
}

export const post = (body: string, headers: Record<string, string>, path = '/') => (url: string) => fetch(url + path, { method: 'POST', headers, body });
export const get = (path = '/', headers: Record<string, string> = {}) => (url: string) => fetch(url + path, { headers });

/** One row's answer from one runtime; a start() that rejects is observed as status 0 and its message. */
export async function observeRow(runtime: 'faas' | 'ours', row: { fn: AnyFn; send: (url: string) => Promise<Response>; options?: Record<string, unknown> }, extra: Record<string, unknown> = {}): Promise<Observation> {
  let url: string;
  try {
    url = await serveWith(runtime, row.fn, { ...row.options, ...extra });
  } catch (err) {
    return { status: 0, type: null, body: (err as Error).message, headers: {} };
  }
  return observe(await row.send(url));
}
