/**
 * pods/{name}/exec and pods/{name}/attach for a pod bound to a node, as kube-apiserver serves them:
 * PodExecOptions / PodAttachOptions checked (`command` for exec, at least one of stdin, stdout,
 * stderr; stderr dropped with a tty), a completed pod refused, then the upgrade request passed to the
 * node agent's `/exec/{namespace}/{pod}/{container}` (or `/attach/…`) with the kubelet's query, and
 * once the agent switched protocols the two connections spliced, bytes untouched (apimachinery's
 * UpgradeAwareHandler). The agent speaks the protocol (WebSocket channels or SPDY) itself; its
 * refusal before the switch becomes a Status.
 */
import type { KubeObject } from '../../api/meta.js';
import { ApiError, badRequest, notFound } from '../../api/errors.js';
import { remoteCommandQuery, type RemoteCommandOptions } from '../../streaming/remote-command.js';
import { splice } from '../../streaming/splice.js';
import { isUpgradeRequest } from '../../streaming/upgrade.js';
import type { Services } from '../definition.js';
import type { ConnectHandler } from '../subresource.js';
import { arr, obj, spec, str } from '../kinds/common.js';
import { kubeletRefusal } from './pod-logs.js';

export type ContainerStreamKind = 'exec' | 'attach';

/** Go's strconv.ParseBool, as query parameters are converted; absent is false. */
function flag(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  if (v === null || v === '') return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw badRequest(`invalid value ${JSON.stringify(v.slice(0, 40))} for ${name}: must be a boolean`);
}

/** The options and command as kube-apiserver and the kubelet check them. */
export function containerStreamOptions(kind: ContainerStreamKind, query: URLSearchParams): { options: RemoteCommandOptions; command: string[] } {
  const tty = flag(query, 'tty');
  const options = { stdin: flag(query, 'stdin'), stdout: flag(query, 'stdout'), stderr: flag(query, 'stderr') && !tty, tty };
  const command = kind === 'exec' ? query.getAll('command') : [];
  if (kind === 'exec' && command.length === 0) throw badRequest('you must specify at least one command for the container');
  if (!options.stdin && !options.stdout && !options.stderr) throw badRequest('you must specify at least 1 of stdin, stdout, stderr');
  return { options, command };
}

/** Headers that make the request an upgrade, passed to the agent as the client sent them. */
const Passed = ['connection', 'upgrade', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'x-stream-protocol-version'];

export async function containerStream(kind: ContainerStreamKind, pod: KubeObject, container: string, query: URLSearchParams, services: Services): Promise<ConnectHandler> {
  const name = pod.metadata.name ?? '';
  const phase = str(obj(pod.status).phase);
  if (phase === 'Succeeded' || phase === 'Failed')
    throw badRequest(`cannot ${kind === 'exec' ? 'exec into' : 'attach to'} a container in a completed pod; current phase is ${phase}`);
  const nodeName = str(spec(pod).nodeName);
  const node = await services.find('', 'v1', 'nodes')?.get({}, nodeName).catch(() => undefined);
  if (!node) throw notFound({ group: '', resource: 'nodes' }, nodeName);
  const { options, command } = containerStreamOptions(kind, query);
  const kubelet = services.kubelet;
  if (!kubelet?.upgrade) throw badRequest(`pod ${name} runs on node ${nodeName}, which this server cannot reach: ${kind} is not available`);
  const target = container || str(obj(arr(spec(pod).containers)[0]).name);
  const path = `/${kind}/${encodeURIComponent(pod.metadata.namespace ?? '')}/${encodeURIComponent(name)}/${encodeURIComponent(target)}?${remoteCommandQuery(options, command)}`;
  return async (req, _res, upgrade) => {
    if (!upgrade || !isUpgradeRequest(req)) throw badRequest('Upgrade request required');
    const headers: Record<string, string> = {};
    for (const h of Passed) {
      const v = req.headers[h];
      if (v !== undefined) headers[h] = Array.isArray(v) ? v.join(', ') : v;
    }
    let answer;
    try {
      answer = await kubelet.upgrade!(node, req.method ?? 'GET', path, headers);
    } catch (err) {
      throw new ApiError(503, 'ServiceUnavailable', `the node agent of ${nodeName} cannot be reached`, undefined, err);
    }
    const backend = answer.socket;
    if (!backend || answer.response.statusCode !== 101) {
      backend?.destroy();
      throw await kubeletRefusal(answer.response, (text) => text);
    }
    const { socket, head } = upgrade.take();
    // The client left while the agent answered: nothing would ever close the agent's side.
    if (socket.destroyed) return void backend.destroy();
    const raw = answer.response.rawHeaders;
    let reply = 'HTTP/1.1 101 Switching Protocols\r\n';
    for (let i = 0; i + 1 < raw.length; i += 2) reply += `${raw[i]}: ${raw[i + 1]}\r\n`;
    socket.write(`${reply}\r\n`);
    if (answer.head?.length) socket.write(answer.head);
    if (head.length) backend.write(head);
    await splice(socket, backend);
  };
}
