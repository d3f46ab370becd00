/**
 * A cluster for the streaming tests, as a user runs it (TLS, a token, a written kubeconfig) plus a
 * pod network: the dialer the node agent will provide, here connecting a pod's port to a real local
 * TCP server standing in for the pod. Endpoints are served schemaless when no typed kind serves
 * them yet, so services/proxy has something to read.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { tokenAuthenticator } from '../../src/auth/authenticator.js';
import { AdminUser, writeKubeconfig } from '../../src/auth/credentials.js';
import { ensureTls, type TlsMaterial } from '../../src/auth/tls.js';
import type { KubeObject } from '../../src/api/meta.js';
import type { PodNetwork, ResourceDefinition } from '../../src/registry/definition.js';
import { createRegistry } from '../../src/registry/index.js';
import { allKinds } from '../../src/registry/kinds/index.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { runKubectl, tempDir, TestToken, type KubectlResult, type Reply } from './helpers.js';
import { rmSync } from 'node:fs';

/** Where a pod's port leads: a local port, or undefined (nothing listens: the dial is refused). */
export type Route = (pod: KubeObject, port: number) => number | undefined;

const endpointsKind: ResourceDefinition = {
  group: '', version: 'v1', kind: 'Endpoints', listKind: 'EndpointsList', plural: 'endpoints', singular: 'endpoints',
  namespaced: true, verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'], shortNames: ['ep'],
  schemaless: true, strategy: {},
};

export interface StreamingCluster {
  server: ClusterApiServer;
  dir: string;
  tls: TlsMaterial;
  /** kubectl's environment: PATH, a private HOME, the kubeconfig. */
  env: NodeJS.ProcessEnv;
  /** Pod dials made, as `name:port`. */
  dials: string[];
  api(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  kubectl(args: readonly string[], bin?: string, env?: NodeJS.ProcessEnv): Promise<KubectlResult>;
  close(): Promise<void>;
}

export async function startStreamingCluster(route: Route, options: { podNetwork?: boolean } = {}): Promise<StreamingCluster> {
  const dir = tempDir();
  const tls = ensureTls(join(dir, 'tls'), ['127.0.0.1', 'localhost']);
  const dials: string[] = [];
  const podNetwork: PodNetwork = {
    dial: (pod, port) => {
      dials.push(`${pod.metadata.name}:${port}`);
      return dialLocal(route(pod, port) ?? 1);
    },
  };
  const storage = new MemoryStorage();
  const extra = allKinds.some((d) => d.group === '' && d.plural === 'endpoints') ? [] : [endpointsKind];
  const registry = createRegistry(storage, { extraDefinitions: extra, podNetwork: options.podNetwork === false ? undefined : podNetwork, rootCa: tls.ca });
  const server = await startServer({ storage, registry, authenticator: tokenAuthenticator(new Map([[TestToken, AdminUser]])), tls, log: () => undefined });
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  writeKubeconfig(kubeconfig, { server: server.url, token: TestToken, ca: tls.ca });
  const env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  return {
    server,
    dir,
    tls,
    env,
    dials,
    api: (method, path, body, headers) => api(server.url, tls.ca, method, path, body, headers),
    kubectl: (args, bin = '/usr/bin/kubectl', extraEnv = {}) => runKubectl(bin, { ...env, ...extraEnv }, args),
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function dialLocal(port: number): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    socket.once('connect', () => (socket.off('error', reject), resolve(socket)));
    socket.once('error', reject);
  });
}

function api(base: string, ca: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = httpsRequest(base + path, { method, ca, headers: { authorization: `Bearer ${TestToken}`, 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: new Headers(res.headers as Record<string, string>), text, json });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A pod as the node agent would leave it: scheduled, Running, with an IP. */
export async function runningPod(c: StreamingCluster, namespace: string, name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}, ip = '10.244.0.7'): Promise<KubeObject> {
  const created = await c.api('POST', `/api/v1/namespaces/${namespace}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { nodeName: 'node-1', ...spec } });
  if (created.status !== 201) throw new Error(`pod ${name}: ${created.text}`);
  const pod = created.json as KubeObject;
  pod.status = { phase: 'Running', podIP: ip, podIPs: [{ ip }], conditions: [{ type: 'Ready', status: 'True' }] };
  const updated = await c.api('PUT', `/api/v1/namespaces/${namespace}/pods/${name}/status`, pod);
  if (updated.status !== 200) throw new Error(`pod ${name} status: ${updated.text}`);
  return updated.json as KubeObject;
}

export interface PortForward {
  /** The local port kubectl printed. */
  port: number;
  process: ChildProcess;
  output(): string;
  /** Ends kubectl (SIGTERM, or the signal given) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `kubectl port-forward …`, waiting for its "Forwarding from 127.0.0.1:<port>" line. */
export async function portForward(c: StreamingCluster, args: readonly string[], options: { bin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<PortForward> {
  const child = spawn(options.bin ?? '/usr/bin/kubectl', ['port-forward', ...args], { env: { ...c.env, ...options.env } });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kubectl port-forward printed no port: ${output}`)), 30_000);
    const check = () => {
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(output);
      if (m) (clearTimeout(timer), resolve(Number(m[1])));
    };
    child.stdout.on('data', check);
    void exited.then(() => (clearTimeout(timer), reject(new Error(`kubectl port-forward exited: ${output}`))));
  });
  return {
    port,
    process: child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
