/**
 * One probe or hook action against a container, as the kubelet's prober runs it: httpGet (2xx and
 * 3xx succeed, redirects followed on the same host, no keep-alive, `kube-probe/<version>` as the
 * User-Agent, at most 10 KiB of body read) and tcpSocket (a connection is success). Failures read
 * as the kubelet writes them, with Go's error texts, because `kubectl describe` users search them.
 * exec runs the command through the container's runtime (its CRI exec): exit code 0 succeeds, and the
 * output (at most 10 KiB) is the failure's message; a runtime without exec, and grpc, are refused
 * before the container starts.
 */
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import type { RuntimeService, StreamOptions } from '../runtime/cri.js';
import type { Container, HttpGetAction, ProbeHandler } from '../types.js';

/** A command in the running container (the runtime's exec), for exec probes and hooks. */
export type ContainerExec = (command: string[], streams: StreamOptions) => Promise<{ exitCode: number }>;

export interface ProbeOutcome {
  ok: boolean;
  /** Why it failed, as the Unhealthy event says it. */
  output: string;
}

/** The kubelet's User-Agent: kube-probe/<its major.minor>, which here is the API server's (nodeInfo.kubeletVersion). */
export const ProbeUserAgent = 'kube-probe/1.20';
const MaxRedirects = 10;
const MaxBody = 10 * 1024;

/** Why a probe or hook of this container can never run here (undefined when it can). */
export function unsupportedHandler(h: ProbeHandler | undefined, what: string, canExec = false): string | undefined {
  if (!h) return undefined;
  if (h.exec && !canExec) return `${what} uses exec, which this container runtime cannot run; use httpGet or tcpSocket`;
  if (h.grpc) return `${what} uses grpc, which this node does not probe; use httpGet or tcpSocket`;
  if (!h.httpGet && !h.tcpSocket && !h.exec && !(h as { sleep?: unknown }).sleep) return `${what} has no handler`;
  return undefined;
}

/** A named port resolved against the container's ports (FindPortByName), or the number itself. */
export function resolvePort(port: number | string, container: Container): number {
  if (typeof port === 'number') return port;
  const found = (container.ports ?? []).find((p) => p.name === port);
  if (found) return found.containerPort;
  if (/^[0-9]+$/.test(port)) return Number(port);
  throw new Error(`couldn't find port: ${port} in ${container.name}`);
}

const hostPort = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/** Go's net error for a failed dial, as the kubelet prints it. */
function dialFailure(err: NodeJS.ErrnoException, target: string): string {
  const why = err.code === 'ECONNREFUSED' ? 'connect: connection refused' : err.code === 'ECONNRESET' ? 'read: connection reset by peer' : err.code === 'EHOSTUNREACH' ? 'connect: no route to host' : (err.code ?? err.message).toLowerCase();
  return `dial tcp ${target}: ${why}`;
}

export function httpCheck(action: HttpGetAction, host: string, port: number, timeoutMs: number, redirects = 0): Promise<ProbeOutcome> {
  const scheme = (action.scheme ?? 'HTTP').toLowerCase();
  const path = action.path ? (action.path.startsWith('/') ? action.path : `/${action.path}`) : '/';
  const target = hostPort(action.host || host, port);
  const url = `${scheme}://${target}${path}`;
  const headers: Record<string, string> = { 'User-Agent': ProbeUserAgent, Accept: '*/*', Connection: 'close' };
  for (const h of action.httpHeaders ?? []) headers[h.name] = h.value;
  return new Promise((resolve) => {
    let timedOut = false;
    const send = scheme === 'https' ? httpsRequest : request;
    const req = send(url, { method: 'GET', headers, agent: false, rejectUnauthorized: false, timeout: timeoutMs }, (res) => {
      let read = 0;
      res.on('data', (b: Buffer) => { read += b.length; if (read > MaxBody) res.destroy(); });
      res.on('error', () => undefined);
      res.on('close', () => clearTimeout(deadline));
      const code = res.statusCode ?? 0;
      const location = res.headers.location;
      if (code >= 300 && code < 400 && location && redirects < MaxRedirects) {
        const next = new URL(location, url);
        // A redirect to another host is a success with a warning, as the kubelet treats it.
        if (next.host !== target) return resolve({ ok: true, output: `Probe terminated redirects, Response: ${code}` });
        return resolve(httpCheck({ ...action, path: next.pathname + next.search }, host, port, timeoutMs, redirects + 1));
      }
      resolve(code >= 200 && code < 400 ? { ok: true, output: '' } : { ok: false, output: `HTTP probe failed with statuscode: ${code}` });
      res.resume();
    });
    const deadline = setTimeout(() => ((timedOut = true), req.destroy(new Error('timeout'))), timeoutMs);
    req.on('timeout', () => ((timedOut = true), req.destroy(new Error('timeout'))));
    req.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      const why = timedOut ? 'context deadline exceeded (Client.Timeout exceeded while awaiting headers)' : dialFailure(err, target);
      resolve({ ok: false, output: `Get "${url}": ${why}` });
    });
    req.end();
  });
}

export function tcpCheck(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  const target = hostPort(host, port);
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (outcome: ProbeOutcome) => (clearTimeout(timer), socket.destroy(), resolve(outcome));
    const timer = setTimeout(() => done({ ok: false, output: `dial tcp ${target}: i/o timeout` }), timeoutMs);
    socket.once('connect', () => done({ ok: true, output: '' }));
    socket.once('error', (err: NodeJS.ErrnoException) => done({ ok: false, output: dialFailure(err, target) }));
  });
}

/** Where a container port of the pod is reached (pod-network.ts: the pod IP, or a node port in shared mode). */
export type PortTarget = (port: number) => { host: string; port: number };

/** The runtime's exec of container `id`, when the runtime has one. */
export const execIn = (runtime: RuntimeService, id: string): ContainerExec | undefined =>
  runtime.exec ? (command, streams) => runtime.exec!(id, command, streams) : undefined;

/** An exec action: the command's exit code decides, its output (stdout and stderr, 10 KiB at most) explains a failure. */
export async function execCheck(exec: ContainerExec, command: string[], timeoutMs: number): Promise<ProbeOutcome> {
  let output = '';
  const collect = new Writable({ write: (chunk: Buffer, _e, done) => ((output = (output + chunk.toString('utf8')).slice(0, MaxBody)), done()) });
  let timer: NodeJS.Timeout | undefined;
  // Ending the output is the client going away: the runtime ends the command.
  const timedOut = new Promise<ProbeOutcome>((resolve) => (timer = setTimeout(() => (collect.destroy(), resolve({ ok: false, output: `command ${JSON.stringify(command.join(' '))} timed out` })), timeoutMs)));
  const ran = exec(command, { stdout: collect, stderr: collect, tty: false }).then(({ exitCode }) => ({ ok: exitCode === 0, output: output.trim() }));
  try {
    return await Promise.race([ran, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs a probe's (or a preStop hook's) handler against the pod; a thrown error is a failure too. */
export async function check(h: ProbeHandler, container: Container, target: PortTarget, timeoutMs: number, exec?: ContainerExec): Promise<ProbeOutcome> {
  try {
    if (h.exec && exec) return await execCheck(exec, h.exec.command ?? [], timeoutMs);
    if (h.httpGet) {
      const to = target(resolvePort(h.httpGet.port, container));
      return await httpCheck(h.httpGet, to.host, to.port, timeoutMs);
    }
    if (h.tcpSocket) {
      const port = resolvePort(h.tcpSocket.port, container);
      const to = h.tcpSocket.host ? { host: h.tcpSocket.host, port } : target(port);
      return await tcpCheck(to.host, to.port, timeoutMs);
    }
    return { ok: false, output: unsupportedHandler(h, 'the probe') ?? 'no handler' };
  } catch (err) {
    return { ok: false, output: (err as Error).message };
  }
}

/** Resolves once `host:port` of the probe takes a TCP connection, polling, or after `withinMs` whatever happens. */
export async function untilListening(h: ProbeHandler, container: Container, target: PortTarget, withinMs: number): Promise<void> {
  const action = h.httpGet ?? h.tcpSocket;
  if (!action) return;
  let to: { host: string; port: number };
  try {
    to = target(resolvePort(action.port, container));
  } catch {
    return;
  }
  const host = action.host || to.host;
  for (const deadline = Date.now() + withinMs; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    if ((await tcpCheck(host, to.port, 200)).ok) return;
  }
}
