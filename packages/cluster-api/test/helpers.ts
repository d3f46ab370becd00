/** A real server on 127.0.0.1 (port 0) over a real backend, and a small fetch wrapper for tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tokenAuthenticator } from '../src/http/auth.js';
import { AdminUser } from '../src/http/credentials.js';
import { startServer } from '../src/server.js';
import { MemoryStorage } from '../src/storage/memory.js';
import type { Storage } from '../src/storage/interface.js';
import { SqliteStorage } from '../src/storage/sqlite.js';

export const Backends = ['memory', 'sqlite'] as const;
export type Backend = (typeof Backends)[number];

export const TestToken = 'test-token-0123456789';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The body as JSON (undefined when it is not JSON). */
  json: any;
}

export interface TestServer {
  url: string;
  /** The store under the server, for tests that need to compact or inspect it. */
  storage: Storage;
  dir: string;
  logs: Record<string, unknown>[];
  request(method: string, path: string, init?: { body?: unknown; headers?: Record<string, string>; token?: string | null }): Promise<Reply>;
  close(): Promise<void>;
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'cluster-api-test-'));
}

export async function startTestServer(backend: Backend): Promise<TestServer> {
  const dir = tempDir();
  const storage = backend === 'memory' ? new MemoryStorage() : SqliteStorage.open(join(dir, 'state.db'));
  const logs: Record<string, unknown>[] = [];
  const server = await startServer({
    storage,
    authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])),
    log: (entry) => logs.push(entry),
  });
  return {
    url: server.url,
    storage,
    dir,
    logs,
    request: (method, path, init = {}) => request(server.url, method, path, init),
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function request(
  base: string,
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string>; token?: string | null },
): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  const token = init.token === undefined ? TestToken : init.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | Buffer | undefined;
  if (init.body !== undefined) {
    body = typeof init.body === 'string' || Buffer.isBuffer(init.body) ? init.body : JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export const namespace = (name: string, labels?: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

export const pod = (name: string, labels: Record<string, string> = {}, namespace?: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels, namespace },
  spec: { containers: [{ name: 'app', image: 'nginx:1.25' }] },
});
