/**
 * What the node agent tests share: real function images (a real `func-runtime build` bundle of an
 * example plus the runtime's npm closure, built with @func/oci into an OCI layout, as
 * packages/oci/test/function-image.test.ts builds them), a client for a served cluster API, and a
 * poll that waits for a condition rather than a duration.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { KubeClient, Resources, type CoreEvent, type KubeObject, type ObjectMeta } from '@func/kube-client';
import { buildFunctionImage, ImageLayout, nodePackageEntries, type RuntimeLayer } from '@func/oci';
import { ensureCa, issueCertificate } from '../../src/auth/tls.js';
import { nodeCertificateRequest } from '../../src/auth/node-credentials.js';
import { startServer, type ClusterApiServer } from '../../src/server.js';
import { MemoryStorage } from '../../src/storage/memory/memory.js';
import { NodeAgent, type NodeAgentOptions } from '../../src/node/agent.js';
import { Scheduler } from '../../src/scheduler/scheduler.js';
import { httpClient } from '../../src/client/http.js';
import { until } from '../../testing/src/poll.js';

const run = promisify(execFile);
export const repo = fileURLToPath(new URL('../../../../', import.meta.url));
const runtimeCli = join(repo, 'packages/runtime/dist/cli.js');

const excludeSources = (rel: string, pkg: string) =>
  (pkg === '@func/runtime' && (/^(src|test|scripts)(\/|$)/.test(rel) || rel.endsWith('.tsbuildinfo') || /\.test\.(js|d\.ts|js\.map|d\.ts\.map)$/.test(rel))) ||
  (pkg === 'esbuild' && rel === '') || pkg.startsWith('@esbuild/');

let runtime: Promise<RuntimeLayer> | undefined;
const bundles = new Map<string, Promise<string>>();
const work = mkdtempSync(join(tmpdir(), 'node-images-'));

/** A `func-runtime build` of a directory (an example name, or a path), once per process. */
export function bundle(source: string): Promise<string> {
  const dir = source.includes('/') ? source : join(repo, 'examples', source);
  let b = bundles.get(dir);
  if (!b) {
    const out = join(work, `bundle-${bundles.size}`);
    b = run(process.execPath, [runtimeCli, 'build', dir, '--outdir', out]).then(() => out);
    bundles.set(dir, b);
  }
  return b;
}

/** A function image of `source` tagged `tag` in the layout at `layoutDir` (a node's `<data-dir>/images`). */
export async function functionImage(layoutDir: string, source: string, tag: string): Promise<string> {
  runtime ??= nodePackageEntries('@func/runtime', repo, { exclude: excludeSources }).then((entries) => ({ entries, cli: 'node_modules/@func/runtime/dist/cli.js' }));
  const layout = await ImageLayout.open(layoutDir);
  const image = await buildFunctionImage(layout, { bundleDir: await bundle(source), runtime: await runtime, name: tag.split(':')[0]!.split('/').pop()!, tag });
  return image.digest;
}

/** A client of a plain-HTTP cluster API (tests' in-process servers). */
export const plainClient = (url: string): KubeClient =>
  new KubeClient({ server: url, insecureSkipTlsVerify: false, credentials: {}, namespace: 'default', context: 'test', files: [] });

/** An object read from the API (which always sets its metadata). */
export type Obj = KubeObject & { metadata: ObjectMeta; spec?: any; status?: any };
/** A core/v1 Event read from the API: as the recorders write it, with eventTime where an events.k8s.io client wrote it. */
export type EventObj = Obj & Omit<CoreEvent, 'metadata'> & { eventTime?: string };

export const probeFunction = join(repo, 'packages/cluster-api/test/support/fixtures/probe-fn');
/** A function that keeps a fifth of a CPU busy while the file named by its BURN_FILE exists. */
export const burnFunction = join(repo, 'packages/cluster-api/test/support/fixtures/burn-fn');

export interface NodeCluster {
  server: ClusterApiServer;
  kube: KubeClient;
  agents: Map<string, NodeAgent>;
  dir: string;
  /** The shared image layout every agent of this cluster runs from. */
  images: string;
  /** Log lines of the agents and the scheduler. */
  logs: Record<string, unknown>[];
  close(): Promise<void>;
}

export interface ClusterOptions {
  nodes?: { name: string; options?: Partial<NodeAgentOptions> }[];
  scheduler?: boolean;
  /** Node controller settings (grace period etc.). */
  nodeControllers?: Parameters<typeof startServer>[0]['nodeControllers'];
  /** Where Service clusterIPs come from (default startServer's 10.96.0.0/12, which the service proxy leaves alone). */
  serviceClusterIpRange?: string;
  /** Keep the `kubernetes` Service (startServer's kubernetesService). */
  kubernetesService?: boolean;
  /** The metrics API's scrape period and the autoscaler's settings (startServer's). */
  autoscaling?: Pick<Parameters<typeof startServer>[0], 'metricResolutionMs' | 'horizontalPodAutoscaler'>;
}

/**
 * A pod CIDR block of a cluster's own (a random /20 of 127.144.0.0–127.191.255.255, a /24 per node), so its
 * pod addresses are not those of clusters other processes on this machine run with the default range,
 * nor in the default Service range (127.128.0.0/12) a node's service proxy listens on.
 */
export const privatePodAddresses = (): Pick<ClusterOptions, 'nodeControllers'> => ({
  nodeControllers: { clusterCidr: `127.${144 + Math.floor(Math.random() * 48)}.${Math.floor(Math.random() * 16) * 16}.0/20`, nodeCidrMaskSize: 24 },
});

/**
 * An in-process cluster API (memory storage, plain HTTP, its controllers) with node agents whose
 * kubelet servers use certificates from a test CA (as serve's), the API server reaching them with
 * its kubelet client certificate, and optionally the scheduler.
 */
export async function startNodeCluster(opts: ClusterOptions = {}): Promise<NodeCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'node-cluster-'));
  const ca = ensureCa(join(dir, 'tls'));
  const kubeletClient = { ...issueCertificate(ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['system:masters'], usages: ['client'] }), ca: ca.cert };
  const server = await startServer({ storage: new MemoryStorage(), kubeletClient, nodeControllers: opts.nodeControllers, serviceClusterIpRange: opts.serviceClusterIpRange, kubernetesService: opts.kubernetesService, ...opts.autoscaling, log: () => undefined });
  const kube = plainClient(server.url);
  const logs: Record<string, unknown>[] = [];
  const log = (e: Record<string, unknown>) => void logs.push(e);
  const images = join(dir, 'images');
  const agents = new Map<string, NodeAgent>();
  const scheduler = opts.scheduler === false ? undefined : new Scheduler({ client: await httpClient(plainClient(server.url)), log });
  await scheduler?.start();
  for (const { name, options } of opts.nodes ?? [{ name: 'node-a' }]) {
    const tls = issueCertificate(ca, nodeCertificateRequest(name, ['127.0.0.1']));
    const agent = new NodeAgent({ kube: plainClient(server.url), name, dataDir: join(dir, name), images, retryMs: 1000, log, server: { ...tls, ca: ca.cert }, ...options });
    await agent.start();
    agents.set(name, agent);
  }
  return {
    server, kube, agents, dir, images, logs,
    async close() {
      await Promise.all([...agents.values()].map((a) => a.stop()));
      await scheduler?.stop();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const podOf = (kube: KubeClient, name: string, namespace = 'default') => kube.get<Obj>(Resources.pods, name, { namespace });

export const condition = (pod: Obj, type: string) => (pod.status?.conditions ?? []).find((c: Obj) => c.type === type);

/** The pod once `test` holds for it. */
export const podUntil = (kube: KubeClient, name: string, what: string, test: (p: Obj) => unknown, timeoutMs = 30_000, namespace = 'default') =>
  until(`${name}: ${what}`, async () => {
    const p = await podOf(kube, name, namespace);
    return test(p) ? p : undefined;
  }, { timeoutMs: timeoutMs });

export const isReady = (p: Obj) => p.status?.phase === 'Running' && condition(p, 'Ready')?.status === 'True';

/** Events about an object (involvedObject.name), oldest first. */
export async function eventsOf(kube: KubeClient, name: string, namespace = 'default'): Promise<EventObj[]> {
  const list = await kube.list<EventObj>(Resources.events, { namespace, fieldSelector: `involvedObject.name=${name}` });
  return list.items;
}

/**
 * One cluster per test file, with the probe function's image as `probe:v1`: started before the
 * file's tests, closed after them. Read `current.cluster` / `current.kube` inside tests.
 */
export function useNodeCluster(opts: ClusterOptions = {}): { cluster: NodeCluster; kube: KubeClient } {
  const current = {} as { cluster: NodeCluster; kube: KubeClient };
  beforeAll(async () => {
    current.cluster = await startNodeCluster(opts);
    current.kube = current.cluster.kube;
    await functionImage(current.cluster.images, probeFunction, 'probe:v1');
  }, 180_000);
  afterAll(async () => {
    await current.cluster?.close();
  });
  return current;
}

/** GET a path of a pod's function (port 8080), as text. */
export const getText = (ip: string, path: string) => fetch(`http://${ip}:8080${path}`).then((r) => r.text());
