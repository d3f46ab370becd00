/**
 * The container runtime interface the agent drives pods through, shaped like Kubernetes' CRI
 * (k8s.io/cri-api runtime/v1): a `RuntimeService` runs pod sandboxes (what a pod's containers
 * share: its network, with the pod's IP) and containers in them, and streams into them; an
 * `ImageService` pulls and describes images. The agent (pod workers, status, probes, logs) knows
 * nothing else of how a container runs: `process/` runs function images as child processes,
 * `simulated/` runs any image as kwok does, and a runtime with sandboxes of its own (an OCI runtime
 * with a network namespace and cgroups) is one more implementation, registered as a
 * `RuntimeHandler` (handlers.ts).
 *
 * Names and states follow the CRI; times are milliseconds since the epoch (the CRI's are
 * nanoseconds); of what the CRI streams, port-forward is asked for as the agent needs it (the
 * address where a pod's port is reached from the node), exec and attach are optional.
 */
import type { LiveLog } from '../logs/logs.js';
import type { Container, Pod } from '../types.js';
import type { Usage } from '../stats/usage.js';

export interface PodSandboxMetadata {
  name: string;
  namespace: string;
  uid: string;
  attempt: number;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname: string;
  /** Where the containers' CRI logs go (`<data-dir>/logs/<ns>_<pod>_<uid>`, as /var/log/pods). */
  logDirectory: string;
  /** The pod's directory on the node (volumes, mount roots). */
  podDir: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The pod as the API has it, for what the CRI carries in the config's other fields (dns, security context, overhead, resources). */
  pod: Pod;
}

export type PodSandboxState = 'SANDBOX_READY' | 'SANDBOX_NOTREADY';

export interface PodSandboxStatus {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  network: { ip: string };
}

/** A volume as the container sees it: `containerPath` inside, `hostPath` the node's (subPath resolved). */
export interface Mount {
  name: string;
  containerPath: string;
  hostPath: string;
  readonly: boolean;
}

export interface ContainerConfig {
  metadata: { name: string; attempt: number };
  /** The reference as the pod names it and, once the image service has it, the image's id. */
  image: { image: string; imageRef?: string };
  command?: string[];
  args?: string[];
  workingDir?: string;
  /** The container's environment, built by the agent (service variables, envFrom, env), in order. */
  envs: Record<string, string>;
  mounts: Mount[];
  /** The CRI log file this instance writes (`<logDirectory>/<container>/<attempt>.log`). */
  logPath: string;
  /** The container as the API has it (ports, resources, securityContext: the CRI's `linux` config). */
  container: Container;
}

export type ContainerStateName = 'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

export interface ContainerStatus {
  id: string;
  metadata: { name: string; attempt: number };
  state: ContainerStateName;
  createdAt: number;
  startedAt?: number;
  finishedAt?: number;
  exitCode?: number;
  /** Set for an instance that could not start (`StartError`); otherwise the agent derives it from the exit code. */
  reason?: string;
  message?: string;
  image: string;
  imageRef: string;
  logPath: string;
}

/** Raised by createContainer when the container cannot be created as asked: the kubelet's CreateContainerError. */
export class CreateContainerError extends Error {
  override readonly name = 'CreateContainerError';
}

/**
 * The client's streams for exec and attach (src/streaming/remote-command.ts hands them over). The
 * caller ends stdout and stderr once the call settles (a runtime may end them first); a client that
 * goes away destroys them ('close' before the command ended): the runtime then ends the command.
 */
export interface StreamOptions {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  tty: boolean;
  /** Terminal size changes (tty only). */
  resize?: AsyncIterable<{ width: number; height: number }>;
}

/** Resolves once `streams`' client is gone (its output closed before the command ended). */
export const clientGone = (streams: StreamOptions): Promise<void> =>
  new Promise((resolve) => {
    for (const out of [streams.stdout, streams.stderr]) {
      if ((out as { destroyed?: boolean } | undefined)?.destroyed) resolve();
      out?.once('close', () => resolve());
    }
  });

export interface RuntimeService {
  /** The runtime handler's name (RuntimeClass `handler`) and what the Node's `containerRuntimeVersion` says of it. */
  readonly name: string;
  version(): { runtimeName: string; runtimeVersion: string };
  /**
   * How pods of this runtime are reported: `kubelet` as a kubelet reports real containers (events,
   * probes, volumes, every status field), `kwok` as kwok's pod stages do (Running and Ready at
   * once, no events, no volumes, deleted without a final status).
   */
  readonly reporting: 'kubelet' | 'kwok';

  /**
   * Makes a pulled or present image ready to run on this runtime (unpacked where its containers
   * read it), as containerd's pull unpacks into the runtime's snapshotter: part of the pull's time
   * in the Pulled event. Optional; createContainer prepares what was not.
   */
  prepareImage?(image: ImageSpec): Promise<void>;

  runPodSandbox(config: PodSandboxConfig): Promise<string>;
  /** Stops every container of the sandbox (SIGKILL: the agent stopped them gracefully first) and its network. */
  stopPodSandbox(id: string): Promise<void>;
  removePodSandbox(id: string): Promise<void>;
  podSandboxStatus(id: string): PodSandboxStatus | undefined;
  listPodSandbox(): PodSandboxStatus[];

  createContainer(sandboxId: string, config: ContainerConfig): Promise<string>;
  startContainer(id: string): Promise<void>;
  /** SIGTERM, then SIGKILL after `timeoutSeconds`; resolves once the container has exited. */
  stopContainer(id: string, timeoutSeconds: number): Promise<void>;
  removeContainer(id: string): Promise<void>;
  containerStatus(id: string): ContainerStatus | undefined;
  listContainers(filter?: { podSandboxId?: string }): ContainerStatus[];
  /** Resolves when the container exits, with its status then (the CRI's container events, CONTAINER_STOPPED_EVENT). */
  waitContainer(id: string): Promise<ContainerStatus>;
  /**
   * A running container's usage now (the CRI's ContainerStats: cumulative CPU time, memory working
   * set), what the node's resource metrics report; absent or undefined: nothing measured (simulated).
   */
  containerStats?(id: string): Usage | undefined;
  /** The live log of a running container, for `kubectl logs -f` (a runtime without one is read from its file). */
  containerLog?(id: string): LiveLog | undefined;

  /** Where a pod's port is reached from the node (what port-forward, probes and the service proxy dial). */
  portForward(sandboxId: string, port: number): { host: string; port: number } | undefined;
  /**
   * A command in a running container, and the container's own streams (the CRI's Exec and Attach;
   * exec probes and preStop hooks run through `exec` too): a runtime without them (simulated) leaves
   * them out, and exec probes and hooks are refused for its containers. A rejection's message
   * reaches the client on the error stream, so it names no host path or internal detail.
   */
  exec?(containerId: string, cmd: string[], streams: StreamOptions): Promise<{ exitCode: number }>;
  attach?(containerId: string, streams: StreamOptions): Promise<void>;
}

export interface ImageSpec {
  image: string;
}

export interface Image {
  /** The image's id as containerStatuses' `imageID` shows it (`<repository>@sha256:…`). */
  id: string;
  repoTags: string[];
  size: number;
  /** The image config's labels (`dev.func.image=function` marks a function image). */
  labels: Record<string, string>;
}

export interface ImageService {
  /** Pulls the image into the node's store; resolves to its id. */
  pullImage(image: ImageSpec): Promise<{ imageRef: string; size: number }>;
  /** The image when the node has it, else undefined. */
  imageStatus(image: ImageSpec): Promise<Image | undefined>;
  removeImage(image: ImageSpec): Promise<void>;
  listImages(): Promise<Image[]>;
  /** Whether a reference not present can be pulled at all (it names a registry host). */
  pullable(image: ImageSpec): boolean;
}
