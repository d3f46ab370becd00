/**
 * The node agent: a kubelet for function pods, and a client of the API like any other (its own
 * credentials, everything through the API). It registers its Node and heartbeats (heartbeat.ts),
 * learns its pod CIDR, watches the pods bound to it (fieldSelector spec.nodeName) and gives each a
 * pod worker (pod-worker.ts); its kubelet server (server.ts) serves logs and tunnels to pods.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { EventBroadcaster, Informer, kubeEventSink, type EventRecorder, type KubeClient, Resources } from '@func/kube-client';
import { Backoff } from './backoff.js';
import { DefaultHeartbeat, NodeHeartbeat, type HeartbeatOptions } from './heartbeat.js';
import { ImageStore } from './runtime/image-store.js';
import { DefaultImageGcPolicy, digestOf, ImageGarbageCollector, ImageGcPeriodMs, type ImageGcPolicy } from './image-gc.js';
import { nodeHandlers, type RuntimeHandler } from './runtime/handlers.js';
import { ProcessRuntime } from './runtime/process/runtime.js';
import { ociHost } from './runtime/oci/host.js';
import { OciRuntime } from './runtime/oci/runtime.js';
import { SimulatedRuntime } from './runtime/simulated/runtime.js';
import { DefaultLogLimits, type LogLimits } from './logs/logs.js';
import { DefaultKubeReserved, parseReserved, type NodeFacts } from './node-object.js';
import type { PodContext } from './pods/pod-context.js';
import { defaultNetworkMode, PodNetwork, type NetworkMode } from './pod-network.js';
import { deletedForGood } from './pods/delete.js';
import { serviceLinkEnv } from './pods/service-links.js';
import { ContainerConfigError } from './pods/downward.js';
import { PodWorker, type PodHooks } from './pods/pod-worker.js';
import { removePodDir, type Sandbox } from './sandbox/sandbox.js';
import { apiSources, type PodSources } from './sources.js';
import { KubeletServer, type KubeletServerOptions } from './server/server.js';
import { sampleResources, type ResourceSample } from './stats/resource-metrics.js';
import { ServiceProxy } from './service-proxy.js';
import { ClusterDns } from './dns/server.js';
import { KubeletAuth } from './server/server-auth.js';
import { StatusWriter } from './status-sync.js';
import type { Node, Pod, Taint } from './types.js';

export interface NodeAgentOptions {
  kube: KubeClient;
  name: string;
  /** Pods, logs and unpacked images live here. */
  dataDir: string;
  /** The node's OCI image layout (default `<dataDir>/images`). */
  images?: string;
  /** Run images that are not function images simulated, as kwok does (default), or refuse them. */
  simulate?: boolean;
  /**
   * More container runtimes (runtime/cri.ts), asked before the node's own: the first whose `runs`
   * takes a container's image runs it (then function images as processes, then, when simulating,
   * every other image).
   */
  runtimes?: RuntimeHandler[];
  /**
   * The node's own runtime: `process` (default: function images as child processes), `oci`
   * (every image in a sandbox of its own under runc; needs what `ociSupport()` checks, and a pod
   * CIDR outside loopback) or `simulated` (every image as kwok runs it).
   */
  containerRuntime?: 'process' | 'oci' | 'simulated';
  /** The node's InternalIP (default 127.0.0.1). */
  hostIP?: string;
  networkMode?: NetworkMode;
  maxPods?: number;
  /** The kubelet server (TLS material, address, port 0 for any); without it the Node announces no endpoint. */
  server?: KubeletServerOptions;
  labels?: Record<string, string>;
  taints?: Taint[];
  heartbeat?: Partial<HeartbeatOptions>;
  logLimits?: LogLimits;
  /** Pod networks the oci runtime keeps ready ahead of need (runtime/oci/sandbox-pool.ts; default 2, 0: none). */
  ociSandboxPool?: number;
  /** Wait before a failed container configuration or volume is tried again (default 10 s). */
  retryMs?: number;
  /** Run the node's service proxy (default true; one per machine: a second node on the same addresses would find them taken). */
  serviceProxy?: boolean;
  /** Kept from pods for the node's own processes, as the kubelet's --kube-reserved (default node-object.ts's DefaultKubeReserved). */
  kubeReserved?: { cpu?: number; memory?: number };
  /** The cluster DNS Service's clusterIP (the kubelet's --cluster-dns): an oci node answers DNS there itself (dns/) and gives it to its pods. */
  clusterDns?: string;
  /** The cluster's domain (the kubelet's --cluster-domain, default cluster.local). */
  clusterDomain?: string;
  /** The CA in PEM, for the pods' `ca.crt` (default: the kubeconfig's). */
  rootCa?: string;
  /** Image garbage collection (image-gc.ts; the kubelet's defaults), and how often it runs (default 5 min). */
  imageGc?: Partial<ImageGcPolicy> & { periodMs?: number };
  log?: (entry: Record<string, unknown>) => void;
}

const quiet = () => undefined;
const MirrorAnnotation = 'kubernetes.io/config.mirror';

export class NodeAgent {
  readonly name: string;
  readonly network: PodNetwork;
  readonly images: ImageStore;
  /** The runtimes, in the order they are asked (runtime/handlers.ts). */
  readonly handlers: readonly RuntimeHandler[];
  /** The Node's `containerRuntimeVersion` (the process runtime's, `<name>://<version>`). */
  private readonly runtimeVersion: string;
  private readonly workers = new Map<string, PodWorker>();
  private readonly broadcaster: EventBroadcaster;
  private readonly events: EventRecorder;
  private readonly sources: PodSources;
  private readonly backoff = new Backoff();
  private readonly pullBackoff = new Backoff();
  private heartbeat?: NodeHeartbeat;
  private server?: KubeletServer;
  /** The kubelet server's port (0 without one). */
  port = 0;
  private podInformer?: Informer<Pod>;
  /** Services' clusterIPs and nodePorts on this node. */
  proxy?: ServiceProxy;
  private self?: Informer<Node>;
  private readonly log: (entry: Record<string, unknown>) => void;
  private allocatable: Record<string, string> = {};
  private oci?: OciRuntime;
  private dns?: ClusterDns;
  private imageGc?: ImageGarbageCollector;
  /** The pods bound to the node when it started have been read (their workers adopted what an earlier run left). */
  private started = false;

  constructor(private readonly opts: NodeAgentOptions) {
    this.name = opts.name;
    this.log = opts.log ?? quiet;
    this.network = new PodNetwork(opts.networkMode ?? defaultNetworkMode(), opts.hostIP ?? '127.0.0.1');
    this.images = new ImageStore({ layout: opts.images ?? join(opts.dataDir, 'images'), rootfs: join(opts.dataDir, 'rootfs'), layers: join(opts.dataDir, 'layers') });
    const own = opts.containerRuntime === 'oci'
      ? (this.oci = new OciRuntime({ images: this.images, network: this.network, host: ociHost(), dataDir: opts.dataDir, hostIP: opts.hostIP ?? '127.0.0.1', logLimits: opts.logLimits, sandboxPool: opts.ociSandboxPool,
        ...(opts.clusterDns && { dns: { server: opts.clusterDns, zone: opts.clusterDomain ?? 'cluster.local' } }) }))
      : new ProcessRuntime({ images: this.images, network: this.network, logLimits: opts.logLimits ?? DefaultLogLimits });
    const v = own.version();
    this.runtimeVersion = `${v.runtimeName}://${v.runtimeVersion}`;
    const simulated = opts.simulate ?? true ? new SimulatedRuntime(this.network) : undefined;
    this.handlers = opts.containerRuntime === 'simulated'
      ? [...(opts.runtimes ?? []), { runtime: new SimulatedRuntime(this.network), runs: () => true }]
      : nodeHandlers(opts.runtimes ?? [], own, simulated);
    this.broadcaster = new EventBroadcaster(kubeEventSink(opts.kube), this.log);
    this.events = this.broadcaster.recorder({ component: 'kubelet', host: opts.name, instance: opts.name });
    this.sources = apiSources(opts.kube, opts.rootCa ?? opts.kube.connection.ca?.toString());
    this.images.inUse = () => this.imagesInUse();
  }

  /** The digests of the images this node's containers (running or exited, not removed) were made from. */
  async imagesInUse(): Promise<Set<string>> {
    const used = new Set<string>();
    for (const runtime of new Set(this.handlers.map((h) => h.runtime))) {
      for (const c of runtime.listContainers()) {
        const digest = digestOf(c.imageRef) ?? digestOf((await this.images.imageStatus({ image: c.image }).catch(() => undefined))?.id ?? '');
        if (digest) used.add(digest);
      }
    }
    return used;
  }

  /** Image garbage collection's pass now (what its timer runs); resolves to the references removed. */
  collectImages(): Promise<string[]> {
    return this.imageGc?.collect() ?? Promise.resolve([]);
  }

  /** Registers the Node, starts heartbeats, then runs the pods bound to it. */
  async start(): Promise<void> {
    const { kube, dataDir } = this.opts;
    mkdirSync(join(dataDir, 'pods'), { recursive: true });
    mkdirSync(join(dataDir, 'logs'), { recursive: true });
    if (this.opts.server) {
      this.server = new KubeletServer(this, new KubeletAuth(kube, this.name), { host: this.network.hostIP, ...this.opts.server });
      this.port = await this.server.listen();
    }
    const version = JSON.parse((await kube.raw({ method: 'GET', path: '/version', what: 'get version' })).body) as { gitVersion?: string };
    const facts: NodeFacts = {
      name: this.name, hostIP: this.network.hostIP, kubeletPort: this.port, maxPods: this.opts.maxPods ?? 110, dataDir,
      kubeletVersion: version.gitVersion ?? 'v0.0.0', runtimeVersion: this.runtimeVersion, labels: this.opts.labels, taints: this.opts.taints,
      reserved: this.opts.kubeReserved ?? parseReserved(DefaultKubeReserved),
    };
    this.heartbeat = new NodeHeartbeat(kube, facts, { ...DefaultHeartbeat, ...this.opts.heartbeat }, this.log, () => this.self?.get(this.name));
    const node = await this.heartbeat.register();
    this.learn(node);
    this.heartbeat.start();
    this.self = new Informer<Node>(kube, Resources.nodes, { fieldSelector: `metadata.name=${this.name}`, onError: quiet })
      .on('add', (n) => this.learn(n)).on('update', (n) => this.learn(n)).start();
    if (this.opts.serviceProxy !== false) {
      const served = this.oci ? this.opts.clusterDns : undefined;
      this.proxy = new ServiceProxy({ kube, nodeName: this.name, hostIP: this.network.hostIP, target: (uid, port) => this.network.target(uid, port), log: this.log, addresses: this.oci?.serviceAddresses, served });
      // Not awaited: the pods run whether or not Services can be listed yet (the informers retry; an
      // oci pod's container waits for the first list, as the kubelet's service environment does).
      void this.proxy.start();
      if (served) await this.startDns(served);
    }
    // What an earlier run left running is known before the pods are read: their workers adopt it.
    await this.oci?.ready();
    this.podInformer = new Informer<Pod>(kube, Resources.pods, { namespace: '', fieldSelector: `spec.nodeName=${this.name}`, onError: quiet })
      .on('add', (p) => this.upsert(p)).on('update', (p) => this.upsert(p)).on('delete', (p) => this.removed(p)).start();
    await this.podInformer.synced;
    this.started = true;
    await this.removeOrphanedSandboxes();
    this.removeStaleDirs();
    const { periodMs, ...policy } = this.opts.imageGc ?? {};
    this.imageGc = new ImageGarbageCollector({
      images: this.images, inUse: () => this.imagesInUse(), dir: this.opts.images ?? join(dataDir, 'images'), policy: { ...DefaultImageGcPolicy, ...policy }, log: this.log,
      warn: (reason, message) => this.events.event({ apiVersion: 'v1', kind: 'Node', name: this.name, uid: this.name }, 'Warning', reason, message),
    }).start(periodMs ?? ImageGcPeriodMs);
  }

  /**
   * Sandboxes an earlier run left for pods that are no longer this node's (deleted, or bound
   * elsewhere, while the agent was down) go with their containers, network and cgroups, as the
   * kubelet's garbage collector removes sandboxes of pods it no longer has.
   */
  private async removeOrphanedSandboxes(): Promise<void> {
    for (const runtime of new Set(this.handlers.map((h) => h.runtime))) {
      for (const s of runtime.listPodSandbox()) {
        if (this.workers.has(s.metadata.uid)) continue;
        this.log({ level: 'info', msg: 'removing the sandbox of a pod this node no longer has', pod: `${s.metadata.namespace}/${s.metadata.name}`, uid: s.metadata.uid });
        await runtime.removePodSandbox(s.id).catch((err: Error) => this.log({ level: 'warn', msg: 'sandbox not removed', pod: `${s.metadata.namespace}/${s.metadata.name}`, error: err.message }));
      }
    }
  }

  /** The cluster DNS on its Service's address (made an address of the host); a node without it logs why, and its pods' lookups of cluster names fail. */
  private async startDns(address: string): Promise<void> {
    try {
      await this.oci!.serviceAddresses.add(address);
      const dns = new ClusterDns({ address, zone: this.opts.clusterDomain ?? 'cluster.local', view: this.proxy!.dnsView(), log: this.log });
      await dns.start();
      this.dns = dns;
    } catch (err) {
      this.log({ level: 'warn', msg: 'the cluster DNS cannot listen', address, error: (err as Error).message });
    }
  }

  private learn(node: Node): void {
    if (node.spec?.podCIDR) this.network.setCidr(node.spec.podCIDR);
    if (node.status?.allocatable) this.allocatable = node.status.allocatable;
  }

  private upsert(pod: Pod): void {
    const uid = pod.metadata.uid ?? '';
    const worker = this.workers.get(uid);
    if (worker) return worker.update(pod);
    // A pod already finished and gone from the API's point of view needs no worker.
    if (pod.metadata.deletionTimestamp && !pod.status?.containerStatuses) return void this.deleteUnstarted(pod);
    // A mirror pod stands for a static pod of this node, and this agent runs none: the kubelet never
    // runs a mirror pod from the API, and deletes one without its static pod as an orphan.
    if (MirrorAnnotation in (pod.metadata.annotations ?? {})) {
      this.log({ level: 'info', msg: 'deleting orphaned mirror pod', pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
      return void this.deleteUnstarted(pod);
    }
    const created = new PodWorker(pod, {
      kube: this.opts.kube, context: (p, w, s) => this.context(p, w, s), status: new StatusWriter(this.opts.kube, pod, 'kubelet', this.log), finished: () => this.workers.delete(uid), log: this.log,
      adopt: !this.started,
    });
    this.workers.set(uid, created);
    created.kick(0);
  }

  /** A pod deleted before this node ever ran it (or an orphaned mirror pod) is removed for good at once, as the kubelet does. */
  private async deleteUnstarted(pod: Pod): Promise<void> {
    // Not retried: the pod's next update (or the agent's next start) asks again.
    await deletedForGood(this.opts.kube, pod).catch((err: Error) => this.warn('pod not deleted', pod, err));
  }

  private removed(pod: Pod): void {
    this.log({ level: 'debug', msg: 'pod removed from the API', pod: `${pod.metadata.namespace}/${pod.metadata.name}` });
    this.workers.get(pod.metadata.uid ?? '')?.remove().catch((err: Error) => this.warn('pod not cleaned up', pod, err));
  }

  private warn(msg: string, pod: Pod, err: Error): void {
    this.log({ level: 'warn', msg, pod: `${pod.metadata.namespace}/${pod.metadata.name}`, error: err.message });
  }

  private context(pod: () => Pod, worker: PodHooks, sandbox: () => Sandbox | undefined): PodContext {
    const p = pod();
    const { name = '', namespace = '', uid = '' } = p.metadata;
    const place = { podIP: '', hostIP: this.network.hostIP, allocatable: this.allocatable };
    const apiEnv = () => this.serviceEnv(pod());
    return {
      pod, place,
      sandbox: (runtime) => worker.sandbox(runtime),
      portForward: (runtime, port) => worker.portForward(runtime, port),
      target: (port) => worker.target(port),
      event: (type, reason, message, fieldPath) => this.events.event({ kind: 'Pod', apiVersion: 'v1', name, namespace, uid, resourceVersion: pod().metadata.resourceVersion, ...(fieldPath ? { fieldPath } : {}) }, type, reason, message),
      changed: () => worker.changed(),
      kick: (ms) => worker.kick(ms),
      backoff: this.backoff, pullBackoff: this.pullBackoff,
      images: this.images, handlers: this.handlers, sources: this.sources,
      podDir: join(this.opts.dataDir, 'pods', uid),
      logDir: join(this.opts.dataDir, 'logs', `${namespace}_${name}_${uid}`),
      logLimits: this.opts.logLimits ?? DefaultLogLimits,
      get volumes() { return sandbox()?.volumes ?? new Map<string, string>(); },
      mounts: (c) => sandbox()?.mounts(c) ?? c.volumeMounts ?? [],
      get baseEnv() { return apiEnv(); },
      retryMs: this.opts.retryMs ?? 10_000,
    };
  }

  /**
   * A pod's service environment (pods/service-links.ts): the API server as this node's pods see it —
   * on an oci node (pods in network namespaces of their own) the `kubernetes` Service's clusterIP and
   * port, as the kubelet gives them, else, and in a cluster without that Service, the address the agent
   * itself uses — and the Services of the pod's namespace (unless `enableServiceLinks: false`). On an
   * oci node none before the Services have been read once (CreateContainerConfigError, tried again),
   * as the kubelet; a process-mode pod, whose API address needs no Service, starts with those listed so far.
   */
  private serviceEnv(pod: Pod): Record<string, string> {
    if (this.oci && this.proxy && !this.proxy.servicesSynced) throw new ContainerConfigError('services have not yet been read at least once, cannot construct envvars');
    const service = this.oci ? this.proxy?.clusterAddress('default', 'kubernetes') : undefined;
    const api = new URL(service ? `https://${service.ip}:${service.port}` : this.opts.kube.connection.server);
    const port = Number(api.port || (api.protocol === 'https:' ? 443 : 80));
    const kubernetes = { namespace: 'default', name: 'kubernetes', clusterIP: api.hostname.replace(/^\[|\]$/g, ''), ports: [{ name: 'https', port, protocol: 'TCP' }] };
    const namespace = pod.metadata.namespace ?? '';
    return serviceLinkEnv(namespace, pod.spec?.enableServiceLinks !== false, this.proxy?.namespaceServices(namespace) ?? [], kubernetes);
  }

  /** Directories of pods this node no longer has (ended while the agent was down). */
  private removeStaleDirs(): void {
    const live = new Set(this.workers.keys());
    for (const uid of readdirSync(join(this.opts.dataDir, 'pods'))) if (!live.has(uid)) removePodDir(join(this.opts.dataDir, 'pods', uid));
    const logs = join(this.opts.dataDir, 'logs');
    for (const dir of readdirSync(logs, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name)) {
      if (!live.has(dir.slice(dir.lastIndexOf('_') + 1))) removePodDir(join(logs, dir));
    }
  }

  /** The worker of a pod on this node, by namespace and name. */
  worker(namespace: string, name: string): PodWorker | undefined {
    for (const w of this.workers.values()) if (w.current.metadata.namespace === namespace && w.current.metadata.name === name) return w;
    return undefined;
  }

  pods(): Pod[] {
    return [...this.workers.values()].map((w) => w.current);
  }

  /** The node's and its running containers' CPU and memory usage now (the kubelet server's /metrics/resource). */
  resources(): ResourceSample {
    return sampleResources(this.handlers.map((h) => h.runtime));
  }

  /** Stops heartbeats and watches, then every container (SIGTERM, then SIGKILL after 2 s). */
  async stop(): Promise<void> {
    this.heartbeat?.stop();
    await this.imageGc?.stop();
    await Promise.all([this.podInformer?.stop(), this.self?.stop(), this.proxy?.stop(), this.dns?.stop()]);
    await Promise.all([...this.workers.values()].map((w) => w.shutdown().catch((err: Error) => this.warn('pod not stopped', w.current, err))));
    await this.server?.close();
    await this.oci?.close();
    await this.broadcaster.close();
  }
}
