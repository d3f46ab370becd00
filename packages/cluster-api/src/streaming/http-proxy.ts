/**
 * HTTP through the API server to a pod, as kube-apiserver's pods/proxy and services/proxy do it
 * (UpgradeAwareHandler with a rewriting transport): the root asked for without its slash is
 * redirected, the request streams to the backend over a connection from the pod network (TLS
 * unverified for `https:` targets, as kube-apiserver's proxy transport), headers are rewritten
 * (proxy-headers.ts), and the answer streams back. An upgrade (a WebSocket to the pod) is passed
 * through as raw bytes once the backend is reached. A backend that cannot be reached is a 503
 * "error trying to reach service"; after the answer has started, a failure cuts the connection.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { backendUnavailable } from '../api/errors.js';
import { forwardedRequestHeaders, returnedResponseHeaders, type ForwardContext } from './proxy-headers.js';
import { dialFailure, splice } from './splice.js';
import { isUpgradeRequest } from './upgrade.js';

export interface ProxyTarget {
  /** A connection to the backend (a pod port, through the pod network). */
  dial(): Promise<Duplex>;
  scheme: 'http' | 'https';
  /** `host:port` the backend is addressed as: a Location naming it comes back through the proxy. */
  backendHost: string;
  /** The backend path (proxy-headers.ts backendPath); '' is the root without its slash. */
  path: string;
  /** The API path of the backend's root: `/api/v1/namespaces/ns/pods/web:8080/proxy`. */
  prefix: string;
  /** How an `https:` backend is verified and what this server shows it; default: unverified, no client certificate. */
  tls?: ConnectionOptions;
  /** Last change to the request headers the backend gets (the aggregator's X-Remote-* identity). */
  rewrite?(headers: OutgoingHttpHeaders): OutgoingHttpHeaders;
}

/** The connection an upgrade request came on, taken over only once the backend answered the dial. */
export type TakeConnection = () => { socket: Duplex; head: Buffer };

const unreachable = (err: unknown) => backendUnavailable(`error trying to reach service: ${dialFailure(err)}`, err);

export async function proxyHttp(req: IncomingMessage, res: ServerResponse, target: ProxyTarget, take?: TakeConnection): Promise<void> {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const query = q < 0 ? '' : url.slice(q);
  if (target.path === '' && (req.method === 'GET' || req.method === 'HEAD')) {
    // kube-apiserver's answer to the root without its slash (issue 4958): relative links then resolve under it.
    res.writeHead(301, { Location: `${q < 0 ? url : url.slice(0, q)}/${query}`, 'Content-Length': 0 });
    return void res.end();
  }
  const path = (target.path || '/') + query;
  const ctx: ForwardContext = { clientIp: req.socket.remoteAddress, prefix: target.prefix, path: target.path || '/' };
  const backend = await connect(target);
  if (take && isUpgradeRequest(req)) return tunnel(req, backend, path, ctx, take, target);
  return exchange(req, res, backend, path, ctx, target);
}

async function connect(target: ProxyTarget): Promise<Duplex> {
  let socket: Duplex;
  try {
    socket = await target.dial();
  } catch (err) {
    throw unreachable(err);
  }
  if (target.scheme === 'http') return socket;
  return new Promise((resolve, reject) => {
    const tls = tlsConnect({ rejectUnauthorized: false, ...target.tls, socket });
    tls.once('secureConnect', () => resolve(tls));
    tls.once('error', (err) => (socket.destroy(), reject(unreachable(err))));
  });
}

function exchange(req: IncomingMessage, res: ServerResponse, backend: Duplex, path: string, ctx: ForwardContext, target: ProxyTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const upstream = httpRequest({ method: req.method, path, headers: requestHeaders(req, ctx, target), createConnection: () => backend as never });
    upstream.on('error', (err) => {
      if (!res.headersSent) return reject(unreachable(err));
      res.destroy();
      resolve();
    });
    upstream.on('response', (answer: IncomingMessage) => {
      const headers = returnedResponseHeaders(answer.headers, { backendHost: target.backendHost, requestHost: req.headers.host, prefix: target.prefix });
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
      answer.once('error', () => res.destroy());
    });
    // The client going away ends the backend exchange with it.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
      backend.destroy();
      resolve();
    });
    req.pipe(upstream);
  });
}

const requestHeaders = (req: IncomingMessage, ctx: ForwardContext, target: ProxyTarget): OutgoingHttpHeaders => {
  const headers = forwardedRequestHeaders(req.headers, ctx);
  return target.rewrite ? target.rewrite(headers) : headers;
};

/** The request head as it goes to the backend, then raw bytes both ways: the backend's 101 (or refusal) reaches the client as sent. */
function tunnel(req: IncomingMessage, backend: Duplex, path: string, ctx: ForwardContext, take: TakeConnection, target: ProxyTarget): void {
  const { socket, head } = take();
  const headers = requestHeaders(req, { ...ctx, upgrade: true }, target);
  const lines = Object.entries(headers).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${String(v)}\r\n`));
  backend.write(`${req.method ?? 'GET'} ${path} HTTP/1.1\r\n${lines.join('')}\r\n`);
  if (head.length > 0) backend.write(head);
  void splice(socket, backend);
}
