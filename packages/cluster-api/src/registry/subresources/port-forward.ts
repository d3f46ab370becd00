/**
 * pods/{name}/portforward once the pod network can reach the pod: the request's connection switched
 * to what the client speaks and served (src/streaming/): SPDY tunnelled in a WebSocket or the SPDY
 * upgrade (kubectl), or the kubelet's WebSocket channels (client-node, the Python client). Everything
 * that can refuse the request is decided before the connection is taken, so a refusal is a Status.
 */
import type { KubeObject } from '../../api/meta.js';
import { badRequest, isApiError } from '../../api/errors.js';
import { ChannelProtocols, channelPorts, serveChannelPortForward } from '../../streaming/channel-port-forward.js';
import { PortForwardProtocolV1, servePortForward, type PortForwardTarget } from '../../streaming/port-forward.js';
import { negotiate, switchToSpdy, type Negotiated } from '../../streaming/upgrade.js';
import { acceptWebSocket } from '../../streaming/websocket.js';
import type { PodNetwork } from '../definition.js';
import type { ConnectHandler } from '../subresource.js';

/** kubectl sends one binary message per SPDY write: a frame header, or up to 32 KiB of data. */
const MaxMessage = 1024 * 1024;

export const portForward = (pod: KubeObject, network: PodNetwork, query: URLSearchParams): ConnectHandler => async (req, res, upgrade) => {
  let chosen: Negotiated;
  try {
    chosen = negotiate(req, [PortForwardProtocolV1], ChannelProtocols);
  } catch (err) {
    if (isApiError(err) && err.code === 403) res.setHeader('X-Accepted-Stream-Protocol-Versions', PortForwardProtocolV1);
    throw err;
  }
  const ports = chosen.transport === 'channel' ? channelPorts(query) : [];
  if (!upgrade) throw badRequest('Upgrade request required');
  const { socket, head } = upgrade.take();
  const { name = '', uid = '' } = pod.metadata;
  const target: PortForwardTarget = { dial: (port) => network.dial(pod, port), pod: name, uid };
  try {
    if (chosen.transport === 'channel') {
      const ws = await acceptWebSocket(req, socket, head, { protocol: chosen.protocol, maxPayload: MaxMessage });
      return serveChannelPortForward(ws, chosen.protocol, ports, target);
    }
    servePortForward(await switchToSpdy(req, socket, head, chosen, { maxMessage: MaxMessage }), target);
  } catch {
    // The client went away during the handshake: nothing is left to answer.
    socket.destroy();
  }
};
