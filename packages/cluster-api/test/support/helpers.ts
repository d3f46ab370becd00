/** A real server on 127.0.0.1 (port 0) over a real backend, and a small fetch wrapper for tests. */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { resolveConfig } from '../../src/config.js';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser } from '../../src/auth/credentials.js';
import { serve, startServer, type Served, type StartOptions } from '../../src/server.js';
import { openStorage } from '../../src/storage/factory.js';
import { GoDuration, goDurationMs } from '../../src/registry/kinds/cron.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import type { Storage } from '../../src/storage/interface.js';
import { SqliteStorage } from '../../src/storage/sqlite/sqlite.js';

const execFileAsync = promisify(execFile);

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
  return serveForTest(dir, storage, { authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])) });
}

/** startServer over `storage`, logging into the TestServer's `logs`; closing it removes `dir`. */
async function serveForTest(dir: string, storage: Storage, options: Omit<StartOptions, 'storage' | 'log'>): Promise<TestServer> {
  const logs: Record<string, unknown>[] = [];
  const server = await startServer({ ...options, storage, log: (entry) => logs.push(entry) });
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

export async function request(
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

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * `serve()` as a user runs it (TLS, generated token and kubeconfig, memory storage), and kubectl's
 * environment for it. Without the embedded node agent and scheduler unless asked: these tests pin
 * the API itself, which a node running their pods would change under them.
 */
export interface KubectlServer {
  dir: string;
  served: Served;
  /** Only what kubectl needs: PATH, a private HOME and cache, the generated kubeconfig. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export async function startKubectlServer(options: { nodes?: boolean; runtimeConfig?: string } = {}): Promise<KubectlServer> {
  const dir = tempDir();
  const nodes = options.nodes ? {} : { disableAgent: true, disableScheduler: true };
  const runtime = options.runtimeConfig ? { runtimeConfig: options.runtimeConfig } : {};
  const served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: 'memory:', ...nodes, ...runtime }), () => {});
  return {
    dir,
    served,
    env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: served.kubeconfig, KUBECACHEDIR: join(dir, 'cache') },
    close: async () => {
      await served.server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** How long kubectl may run: 30 s, or 10 s past its own `--timeout` (`kubectl wait --timeout=180s` waits that long). */
const kubectlBudgetMs = (args: readonly string[]): number => {
  const i = args.findIndex((a) => a === '--timeout' || a.startsWith('--timeout='));
  const given = i < 0 ? undefined : args[i]!.includes('=') ? args[i]!.slice('--timeout='.length) : args[i + 1];
  const ms = given && GoDuration.test(given) ? goDurationMs(given) : 0;
  return Math.max(30_000, ms + 10_000);
};

/** Runs kubectl; a non-zero exit is a result to assert on, not a throw. */
export async function runKubectl(bin: string, env: NodeJS.ProcessEnv, args: readonly string[]): Promise<KubectlResult> {
  try {
    const { stdout, stderr } = await execFileAsync(bin, args, { env, timeout: kubectlBudgetMs(args) });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * HTTP status codes kubectl reports at -v=6: `GET https://… 200 OK in 3 milliseconds` (1.32) or
 * `"Response" verb="GET" url="https://…" status="200 OK"` (1.33).
 */
export const kubectlStatuses = (log: string): number[] =>
  [...log.matchAll(/ https:\/\/\S+ (\d{3}) | status="(\d{3}) /g)].map((m) => Number(m[1] ?? m[2]));

/** A watch read line by line as the lines arrive; `next` resolves undefined once the server ends the stream. */
export async function openWatch(s: { url: string }, path: string, accept = 'application/json', token = TestToken) {
  const controller = new AbortController();
  const res = await fetch(s.url + path, { headers: { authorization: `Bearer ${token}`, accept }, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const next = async (): Promise<any | undefined> => {
    for (;;) {
      const nl = buffer.indexOf('\n');
      if (nl >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        return JSON.parse(line);
      }
      const { value, done } = await reader.read();
      if (done) return undefined;
      buffer += decoder.decode(value, { stream: true });
    }
  };
  return { res, next, close: () => controller.abort() };
}

/** A subject of a RoleBinding or ClusterRoleBinding. */
export type Subject = { kind: 'User'; name: string } | { kind: 'Group'; name: string } | { kind: 'ServiceAccount'; name: string; namespace: string };

/**
 * Binds ClusterRole `role` to `subjects` (in `namespace`, or cluster-wide without one) as the admin,
 * then waits until the authorizer allows the subjects `check` (its cache follows RBAC objects by
 * watch, a moment after the write, as in Kubernetes). For tests whose non-admin users need permissions.
 */
export async function grant(
  s: Pick<TestServer, 'request'>,
  binding: { name: string; role: string; subjects: Subject[]; namespace?: string },
  check: { verb: string; resource: string; group?: string; name?: string },
): Promise<void> {
  const { name, role, subjects, namespace: ns } = binding;
  const kind = ns ? 'RoleBinding' : 'ClusterRoleBinding';
  const path = ns ? `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings` : '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
  const body = { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects };
  const created = await s.request('POST', path, { body });
  if (created.status !== 201) throw new Error(`binding ${name}: HTTP ${created.status} ${created.text}`);
  const first = subjects[0]!;
  const who = first.kind === 'User' ? { user: first.name } : first.kind === 'Group' ? { user: 'someone', groups: [first.name] } : { user: `system:serviceaccount:${first.namespace}:${first.name}` };
  const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { ...who, resourceAttributes: { ...check, namespace: ns ?? '' } } };
  for (const deadline = Date.now() + 10_000; ; await new Promise((r) => setTimeout(r, 20))) {
    const r = await s.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', { body: review });
    if (r.json?.status?.allowed === true) return;
    if (Date.now() > deadline) throw new Error(`binding ${name} not in effect after 10 s: ${r.text}`);
  }
}

/**
 * Token-file users beside the admin (TestToken): `bob-token` is bob in group devs, `carol-token` carol
 * in no group, `node-a-token` the node agent of node `a` (system:node:a in system:nodes).
 */
export const Users: ReadonlyMap<string, { name: string; uid: string; groups: string[] }> = new Map([
  [TestToken, AdminUser],
  ['bob-token', { name: 'bob', uid: 'bob-uid', groups: ['devs'] }],
  ['carol-token', { name: 'carol', uid: 'carol-uid', groups: [] }],
  ['node-a-token', { name: 'system:node:a', uid: '', groups: ['system:nodes'] }],
]);

/**
 * A server over `storageUrl` (`sqlite:…`, `etcd://…`, default memory) whose users are `Users`, as a
 * token file would give them, authorized by RBAC (or the modes given).
 */
export async function startServerWithUsers(storageUrl = 'memory:', authorization?: StartOptions['authorization']): Promise<TestServer> {
  const dir = tempDir();
  return serveForTest(dir, await openStorage(storageUrl.replace('{dir}', dir)), { authenticator: tokenAuthenticator(Users), authorization });
}
