/**
 * `func-runtime events`: the broker's event debugger API (cluster-api's broker/debug/api.ts), reached
 * at the address of a Broker (`status.address.url`, looked up with the kubeconfig as `invoke
 * --broker` does), with the kubeconfig's bearer token, which the broker checks with a TokenReview and
 * a SubjectAccessReview (`get`/`create` on `brokers/events`).
 */
import { readFileSync } from 'node:fs';
import { brokerTarget } from './broker-target.js';
import type { ClusterFlags } from '../commands/deploy-flags.js';

export interface DebuggerTarget {
  /** `http://host:port` of the broker process. */
  readonly base: string;
  readonly namespace: string;
  readonly broker: string;
  readonly token: string;
}

export class DebuggerUsageError extends Error {}

export async function debuggerTarget(flags: ClusterFlags & { broker: string }): Promise<DebuggerTarget> {
  const ingress = await brokerTarget(flags.broker, process.env, flags);
  const [, namespace, broker] = ingress.pathname.split('/').map((s) => decodeURIComponent(s));
  if (!namespace || !broker) throw new DebuggerUsageError(`the Broker's address ${ingress.href} does not name /<namespace>/<broker>`);
  const { KubeClient } = await import('@func/kube-client');
  const client = KubeClient.fromKubeconfig({ kubeconfig: flags.kubeconfig, context: flags.context });
  const { token, tokenFile } = client.connection.credentials;
  client.close();
  const bearer = token ?? (tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined);
  if (!bearer) throw new DebuggerUsageError('the event debugger needs a bearer token: the kubeconfig\'s user has none (client certificates are not accepted by the broker)');
  return { base: ingress.origin, namespace, broker, token: bearer };
}

/** A request to the debugger API; the answer as it came. */
export function callDebugger(t: DebuggerTarget, method: 'GET' | 'POST', path: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.base}/debug/v1/namespaces/${encodeURIComponent(t.namespace)}/${path}`, { method, headers: { authorization: `Bearer ${t.token}` }, ...(signal ? { signal } : {}) });
}

/** A Kubernetes Status's message, else the status line. */
export async function failureOf(res: Response): Promise<string> {
  const text = await res.text();
  try {
    const s = JSON.parse(text) as { message?: string };
    if (s.message) return `${res.status}: ${s.message}`;
  } catch {
    // not a Status
  }
  return `${res.status} ${res.statusText}`;
}
