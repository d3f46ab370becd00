/**
 * pods/{name}/log, exec, attach and portforward as kube-apiserver answers them before it reaches the
 * node: the container is checked (validateContainer), then a pod no node runs has no logs (204, no
 * body) and nothing to exec into or forward to (400 "does not have a host assigned"). A scheduled
 * pod's logs come from its node's agent (pod-logs.ts) and its ports are forwarded through the pod
 * network (the node agent's) when there is one; exec and attach are spliced to the node agent's own
 * exec and attach (pod-exec.ts); for a node that does not exist, 404 for the node, as kube-apiserver
 * answers.
 */
import type { KubeObject } from '../../api/meta.js';
import type { Services } from '../definition.js';
import type { ConnectBehaviour, ConnectHandler, SubresourceDef } from '../subresource.js';
import { badRequest, notFound } from '../../api/errors.js';
import { arr, obj, spec, str } from '../kinds/common.js';
import { nodeLogs } from './pod-logs.js';
import { portForward } from './port-forward.js';
import { containerStream } from './pod-exec.js';

const containerNames = (pod: KubeObject): string[] =>
  ['initContainers', 'containers', 'ephemeralContainers'].flatMap((field) => arr(spec(pod)[field]).map((c) => str(obj(c).name)));

function validateContainer(pod: KubeObject, container: string): void {
  const name = pod.metadata.name ?? '';
  if (container) {
    if (!containerNames(pod).includes(container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    return;
  }
  const main = arr(spec(pod).containers);
  if (main.length === 1) return;
  if (main.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`);
}

/** Nothing to stream: kube-apiserver's answer for the logs of a pod no kubelet runs. */
const noContent: ConnectHandler = (_req, res) => void res.writeHead(204).end();

const podConnect: ConnectBehaviour = {
  type: 'connect',
  connect(pod, { subresource, query }, services) {
    if (subresource !== 'portforward') validateContainer(pod, query.get('container') ?? '');
    const node = str(spec(pod).nodeName);
    if (node && subresource === 'log') return nodeLogs(pod, query.get('container') ?? '', query, services);
    if (node && subresource === 'portforward' && services.podNetwork) return portForward(pod, services.podNetwork, query);
    if (node && (subresource === 'exec' || subresource === 'attach')) return containerStream(subresource, pod, query.get('container') ?? '', query, services);
    if (node) throw notFound({ group: '', resource: 'nodes' }, node);
    if (subresource === 'log') return noContent;
    throw badRequest(`pod ${pod.metadata.name ?? ''} does not have a host assigned`);
  },
};

/** exec, attach and portforward also need `create` when asked by GET (a WebSocket upgrade), as kube-apiserver requires. */
const options = (kind: string): SubresourceDef => ({ verbs: ['create', 'get'], kind: { group: '', version: 'v1', kind }, behaviour: { ...podConnect, requiresCreate: true } });

/** The pod's connect subresources, as the Pod kind lists them. */
export const podLog: SubresourceDef = { verbs: ['get'], behaviour: podConnect };
export const podExec = options('PodExecOptions');
export const podAttach = options('PodAttachOptions');
export const podPortForward = options('PodPortForwardOptions');
