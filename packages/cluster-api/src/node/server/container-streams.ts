/**
 * The kubelet's `/exec/{namespace}/{pod}/{container}` and `/attach/…`: the pod and its running
 * container found, the connection switched to what the client speaks (the remote-command protocols
 * of src/streaming: WebSocket channels v5/v4, or SPDY v4), then the container's runtime runs the
 * command (`exec`) or joins its streams (`attach`). Refusals before the switch are plain HTTP
 * answers, as the kubelet's (the API server turns them into Statuses); a runtime that cannot exec
 * or attach answers on the error stream, as a CRI error reaches the client.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { isApiError } from '../../api/errors.js';
import { RemoteCommandError, RemoteCommandSpdyProtocols, RemoteCommandWebSocketProtocols, remoteCommandOptions, type CommandRunner } from '../../streaming/remote-command.js';
import { serveSpdyCommand } from '../../streaming/remote-command-spdy.js';
import { serveWebSocketCommand } from '../../streaming/remote-command-websocket.js';
import { negotiate, switchToSpdy, type Negotiated } from '../../streaming/upgrade.js';
import { acceptWebSocket } from '../../streaming/websocket.js';
import type { PodWorker } from '../pods/pod-worker.js';

export type StreamKind = 'exec' | 'attach';

/** An answer before the switch: status code and text. */
export type Refuse = (code: number, message: string) => void;

/** Stdin messages are at most what kubectl writes at once (32 KiB); resize and control messages are tiny. */
const MaxMessage = 1024 * 1024;

/** The runner for `kind` in the container, or the reason it cannot be served (a CRI error, on the error stream). */
function runner(kind: StreamKind, worker: PodWorker, container: string, command: string[]): CommandRunner {
  return async (streams) => {
    const live = worker.container(container)?.live;
    if (!live) throw new RemoteCommandError(`container not found ("${container}")`);
    const { runtime, id } = live;
    const call = kind === 'exec' ? runtime.exec?.bind(runtime, id, command, streams) : runtime.attach?.bind(runtime, id, streams);
    if (!call) throw new RemoteCommandError(`the ${runtime.name} container runtime does not support ${kind}: container "${container}" runs without a process to ${kind === 'exec' ? 'run commands beside' : 'attach to'}`);
    try {
      return await call();
    } catch (err) {
      throw new RemoteCommandError(`error ${kind === 'exec' ? 'executing command in' : 'attaching to'} container: ${(err as Error).message}`);
    }
  };
}

export async function serveContainerStream(
  kind: StreamKind, req: IncomingMessage, socket: Duplex, head: Buffer,
  target: { worker?: PodWorker; pod: string; container: string; query: URLSearchParams }, refuse: Refuse,
): Promise<void> {
  const { worker, pod, container, query } = target;
  let chosen: Negotiated;
  let options;
  const command = kind === 'exec' ? query.getAll('command') : [];
  try {
    if (!worker) return refuse(404, `pod "${pod}" does not exist`);
    if (!worker.container(container)?.live) return refuse(404, `container not found ("${container}")`);
    if (kind === 'exec' && command.length === 0) return refuse(400, 'you must specify at least one command for the container');
    options = remoteCommandOptions(query);
    chosen = negotiate(req, RemoteCommandSpdyProtocols, RemoteCommandWebSocketProtocols);
  } catch (err) {
    return refuse(isApiError(err) ? err.code : 400, isApiError(err) ? err.message : 'Bad Request');
  }
  const run = runner(kind, worker, container, command);
  try {
    if (chosen.transport === 'channel') {
      const ws = await acceptWebSocket(req, socket, head, { protocol: chosen.protocol, maxPayload: MaxMessage });
      return await serveWebSocketCommand(ws, chosen.protocol, options, run, command);
    }
    // SPDY tunnelled in a WebSocket (KEP-4006) is the API server's to unwrap; here it is served as SPDY too.
    await serveSpdyCommand(await switchToSpdy(req, socket, head, chosen, { maxMessage: MaxMessage }), options, run, command);
  } catch {
    socket.destroy();
  }
}
