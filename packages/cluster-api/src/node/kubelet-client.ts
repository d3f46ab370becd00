/**
 * How the API server reaches a node's agent, as kube-apiserver reaches kubelets: to the node's
 * address (InternalIP, then ExternalIP, then Hostname, k3s' --kubelet-preferred-address-types) and
 * `status.daemonEndpoints.kubeletEndpoint.Port`, over TLS with the API server's kubelet client
 * certificate. The agent's certificate must chain to the cluster CA and name this very node
 * (`system:node:<name>`, as node credentials do), so no other holder of a cluster certificate can
 * stand in for it. `request` is a plain HTTPS request (containerLogs); `tunnel` a raw byte stream to
 * a pod's port (port-forward, pods/proxy), working across machines.
 */
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';

export interface KubeletClientTls {
  cert: string;
  key: string;
  /** The cluster CA that signs node certificates. */
  ca: string;
}

interface NodeLike {
  metadata: { name?: string };
  status?: unknown;
}

export class KubeletUnreachable extends Error {
  override readonly name = 'KubeletUnreachable';
  /** The network error the agent met dialling the pod (ECONNREFUSED…), for the client's message. */
  code?: string;
}

/** The header in which the agent's /tunnel names the network error it met dialling the pod. */
export const DialErrorHeader = 'x-dial-error';

const Preferred = ['InternalIP', 'ExternalIP', 'Hostname'];

/** host:port of a node's kubelet server, or undefined when the node announces none. */
export function kubeletAddress(node: NodeLike): { host: string; port: number } | undefined {
  const status = (node.status ?? {}) as { addresses?: { type?: string; address?: string }[]; daemonEndpoints?: { kubeletEndpoint?: { Port?: number } } };
  const port = status.daemonEndpoints?.kubeletEndpoint?.Port;
  const addresses = status.addresses ?? [];
  for (const type of Preferred) {
    const found = addresses.find((a) => a.type === type && a.address);
    if (found && port) return { host: found.address!, port };
  }
  return undefined;
}

export class KubeletClient {
  constructor(private readonly tls: KubeletClientTls) {}

  private options(node: NodeLike, method: string, path: string, headers: Record<string, string> = {}) {
    const target = kubeletAddress(node);
    if (!target) throw new KubeletUnreachable(`node ${node.metadata.name ?? ''} announces no kubelet endpoint`);
    const name = node.metadata.name ?? '';
    return {
      host: target.host,
      port: target.port,
      method,
      path,
      headers,
      cert: this.tls.cert,
      key: this.tls.key,
      ca: this.tls.ca,
      agent: false as const,
      // A tunnel's client may finish sending long before the pod finishes answering.
      allowHalfOpen: true,
      servername: isIP(target.host) ? undefined : target.host,
      // The node's own certificate: CN system:node:<name>, whatever address it is reached at.
      checkServerIdentity: (host: string, cert: PeerCertificate) =>
        cert.subject?.CN === `system:node:${name}` ? undefined : checkServerIdentity(host, cert),
    };
  }

  /** An HTTPS request to the node's agent; resolves with its response, whatever the status. */
  request(node: NodeLike, method: string, path: string): Promise<IncomingMessage> {
    return new Promise((resolve, reject) => {
      let req;
      try {
        req = httpsRequest(this.options(node, method, path), resolve);
      } catch (err) {
        return reject(err);
      }
      req.once('error', (err) => reject(new KubeletUnreachable(err.message)));
      req.setTimeout(30_000, () => req.destroy(new Error('no answer in 30 s')));
      req.end();
    });
  }

  /**
   * An upgrade request to the node's agent (its `headers` say to what): resolves with the 101 and the
   * switched connection, or with the agent's refusal (any other answer, its body unread).
   */
  upgrade(node: NodeLike, method: string, path: string, headers: Record<string, string>): Promise<UpgradeAnswer> {
    return new Promise((resolve, reject) => {
      let req;
      try {
        req = httpsRequest(this.options(node, method, path, headers));
      } catch (err) {
        return reject(err);
      }
      req.once('upgrade', (response: IncomingMessage, socket: Duplex, head: Buffer) => resolve({ response, socket, head }));
      req.once('response', (response: IncomingMessage) => resolve({ response }));
      req.once('error', (err) => reject(new KubeletUnreachable(err.message)));
      req.end();
    });
  }

  /** A byte stream to `port` of the pod, through the agent's `/tunnel` (HTTP upgrade to raw TCP). */
  async tunnel(node: NodeLike, namespace: string, pod: string, port: number): Promise<Duplex> {
    const path = `/tunnel/${encodeURIComponent(namespace)}/${encodeURIComponent(pod)}/${port}`;
    const answer = await this.upgrade(node, 'POST', path, { Connection: 'Upgrade', Upgrade: 'tcp' });
    if (answer.socket) {
      if (answer.head?.length) answer.socket.unshift(answer.head);
      return answer.socket;
    }
    const res = answer.response;
    let body = '';
    for await (const c of res.setEncoding('utf8')) body += (c as string).slice(0, 4096);
    const err = new KubeletUnreachable(body.trim() || `status ${res.statusCode}`);
    const code = res.headers[DialErrorHeader];
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) err.code = code;
    throw err;
  }
}

/** The agent's answer to an upgrade: `socket` (and the bytes read past the 101) when it switched. */
export interface UpgradeAnswer {
  response: IncomingMessage;
  socket?: Duplex;
  head?: Buffer;
}

interface PodLike {
  metadata: { name?: string; namespace?: string };
  spec?: unknown;
}

/**
 * The API server's pod network (registry/definition.ts PodNetwork): a connection to a pod's port is
 * a tunnel through the agent of the node that runs it, so it works wherever that node is. A node
 * that does not exist, or announces no kubelet endpoint, is unreachable (EHOSTUNREACH).
 */
export function kubeletPodNetwork(client: KubeletClient, node: (name: string) => Promise<NodeLike | undefined>) {
  return {
    async dial(pod: PodLike, port: number): Promise<Duplex> {
      const nodeName = String((pod.spec as { nodeName?: string } | undefined)?.nodeName ?? '');
      const found = await node(nodeName).catch(() => undefined);
      if (!found || !kubeletAddress(found)) throw Object.assign(new KubeletUnreachable(`node ${nodeName} cannot be reached`), { code: 'EHOSTUNREACH' });
      return client.tunnel(found, pod.metadata.namespace ?? '', pod.metadata.name ?? '', port);
    },
  };
}
