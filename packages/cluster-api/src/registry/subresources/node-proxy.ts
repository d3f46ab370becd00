/**
 * nodes/{name}/proxy/{path}: what kube-apiserver answers for a node no kubelet of this server
 * listens for. It picks the node's address (InternalIP, then ExternalIP, Hostname) and the kubelet
 * port (status.daemonEndpoints.kubeletEndpoint.Port, else 10250); without an address that is the
 * NoMatchError kube-apiserver returns, and with one, the dial it would make is refused. The request
 * never leaves this process: nothing here connects to the addresses a Node object names.
 */
import { isIP } from 'node:net';
import type { KubeObject } from '../../api/meta.js';
import { ApiError } from '../../api/errors.js';
import { arr, obj, status, str } from '../kinds/common.js';
import type { SubresourceDef } from '../subresource.js';

const Preferred = ['InternalIP', 'ExternalIP', 'Hostname'];
const DefaultKubeletPort = 10250;

const addressOf = (node: KubeObject): string | undefined => {
  const addresses = arr(status(node).addresses).map(obj);
  for (const type of Preferred) {
    const found = addresses.find((a) => a.type === type && str(a.address));
    if (found) return str(found.address);
  }
  return undefined;
};

const known = (node: KubeObject): string =>
  `[${arr(status(node).addresses).map(obj).map((a) => `{${str(a.type)} ${str(a.address)}}`).join(' ')}]`;

export const nodeProxy: SubresourceDef = {
  verbs: ['create', 'delete', 'get', 'patch', 'update'],
  kind: { group: '', version: 'v1', kind: 'NodeProxyOptions' },
  behaviour: {
    type: 'connect',
    takesPath: true,
    connect(node) {
      const host = addressOf(node);
      if (!host) throw new ApiError(500, 'InternalError', `Internal error occurred: no preferred addresses found; known addresses: ${known(node)}`);
      const port = Number(obj(obj(status(node).daemonEndpoints).kubeletEndpoint).Port) || DefaultKubeletPort;
      const target = isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
      throw new ApiError(503, 'ServiceUnavailable', `error trying to reach service: dial tcp ${target}: connect: connection refused`, { retryAfterSeconds: 1 });
    },
  },
};
