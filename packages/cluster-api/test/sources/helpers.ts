/**
 * What the source tests share: a `serve()` with its broker (SQLite, in a temp dir) and no node or
 * gateway, an admin client and kubectl from its kubeconfig, an HTTP receiver on 127.0.0.1 that
 * records the CloudEvents it is sent, and waits on a source's conditions.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient, resourceType } from '@func/kube-client';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { runKubectl, type KubectlResult } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

export const KUBECTL = '/usr/bin/kubectl';

export const Sources = {
  ping: resourceType('sources.knative.dev/v1', 'PingSource', 'pingsources'),
  apiServer: resourceType('sources.knative.dev/v1', 'ApiServerSource', 'apiserversources'),
  sinkBinding: resourceType('sources.knative.dev/v1', 'SinkBinding', 'sinkbindings'),
  container: resourceType('sources.knative.dev/v1', 'ContainerSource', 'containersources'),
};

export interface Condition { type: string; status: string; reason?: string; message?: string }
export type Source = { metadata: { name: string; namespace: string; generation?: number }; spec?: Record<string, unknown>; status?: { conditions?: Condition[]; sinkUri?: string; observedGeneration?: number } };

export interface SourcesCluster {
  dir: string;
  served: Served;
  kube: KubeClient;
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** `kubectl apply -f` of objects (a v1 List); the result as it is. */
  apply(...objects: object[]): Promise<KubectlResult>;
  close(): Promise<void>;
}

export async function startSourcesCluster(): Promise<SourcesCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sources-'));
  const served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), brokerPort: 0, disable: 'node,gateway' }), () => {});
  const kubeconfig = served.kubeconfig!;
  const env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  const kube = KubeClient.fromKubeconfig({ kubeconfig });
  const kubectl = (...args: string[]) => runKubectl(KUBECTL, env, args);
  let n = 0;
  return {
    dir, served, kube, kubectl,
    apply: async (...objects) => {
      const file = join(dir, `manifest-${n++}.json`);
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
      return kubectl('apply', '-f', file);
    },
    close: async () => {
      kube.close();
      await served.server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Received { path: string; headers: IncomingHttpHeaders; body: string }

/** An HTTP server on 127.0.0.1 answering `status` (202) and recording each request. */
export async function startReceiver(status = 202): Promise<{ url: string; received: Received[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, received, close: () => new Promise((r) => server.close(() => r())) };
}

export const conditionOf = (o: Source | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

/** The source once its condition `type` has `status`. */
export const waitCondition = (kube: KubeClient, kind: keyof typeof Sources, namespace: string, name: string, type: string, status: string, timeoutMs = 30_000) =>
  until(`${kind} ${namespace}/${name} ${type}=${status}`, async () => {
    const o = await kube.get<Source>(Sources[kind], name, { namespace });
    return conditionOf(o, type)?.status === status ? o : undefined;
  }, { timeoutMs });

export const source = (kind: string, name: string, spec: Record<string, unknown>, namespace = 'default') =>
  ({ apiVersion: 'sources.knative.dev/v1', kind, metadata: { name, namespace }, spec });
