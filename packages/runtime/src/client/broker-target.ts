/**
 * `func-runtime invoke --broker <url | namespace/name | name>`: where an event for a Knative Broker
 * goes. A URL is the Broker's ingress itself; a name is looked up in the cluster the kubeconfig
 * names (kubectl's rules: KUBECONFIG, ~/.kube/config, in-cluster), in the context's namespace unless
 * one is given, and its `status.address.url` is the ingress — the URL `kubectl get brokers` shows.
 */
import { InvokeUsageError, parseTarget } from './invoke-request.js';

/** The Broker could not be looked up or has no address; `unreachable`: the API did not answer. */
export class BrokerLookupError extends Error {
  override name = 'BrokerLookupError';
  constructor(message: string, readonly unreachable = false) {
    super(message);
  }
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface BrokerObject {
  status?: { address?: { url?: string }; conditions?: { type?: string; status?: string; reason?: string; message?: string }[] };
}

/** Why a Broker has no address yet, from its Ready condition. */
function notReady(b: BrokerObject): string {
  const ready = b.status?.conditions?.find((c) => c.type === 'Ready');
  if (!ready) return 'no broker has reconciled it yet (is `cluster-api serve` or `cluster-api broker` running?)';
  return `Ready is ${ready.status}${ready.reason ? ` (${ready.reason}${ready.message ? `: ${ready.message}` : ''})` : ''}`;
}

export function parseBrokerName(raw: string): { namespace?: string; name: string } {
  const parts = raw.split('/');
  const [namespace, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (parts.length > 2 || !name || !NAME.test(name) || (namespace !== undefined && !NAME.test(namespace)))
    throw new InvokeUsageError(`--broker "${raw}" is neither a URL nor a Broker name: give http://host:port/<namespace>/<broker>, <namespace>/<broker> or <broker>.`);
  return namespace === undefined ? { name } : { namespace, name };
}

export async function brokerTarget(raw: string, env: NodeJS.ProcessEnv = process.env, files: { kubeconfig?: string; context?: string; namespace?: string } = {}): Promise<URL> {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) return parseTarget(raw);
  const { namespace, name } = parseBrokerName(raw);
  const kube = await import('@func/kube-client');
  let client;
  try {
    client = kube.KubeClient.fromKubeconfig({ env, kubeconfig: files.kubeconfig, context: files.context });
  } catch (err) {
    throw new InvokeUsageError(`--broker ${raw}: ${(err as Error).message}`);
  }
  const ns = namespace ?? files.namespace ?? client.namespace;
  const brokers = kube.resourceType('eventing.knative.dev/v1', 'Broker', 'brokers');
  try {
    const broker = await client.get<BrokerObject>(brokers, name, { namespace: ns });
    const url = broker.status?.address?.url;
    if (!url) throw new BrokerLookupError(`Broker ${ns}/${name} has no address yet: ${notReady(broker)}.`);
    return parseTarget(url);
  } catch (err) {
    if (err instanceof BrokerLookupError || err instanceof InvokeUsageError) throw err;
    if (err instanceof kube.KubeConnectionError) throw new BrokerLookupError(`cannot look up Broker ${ns}/${name}: ${err.message}`, true);
    if (kube.isNotFound(err) && /could not find the requested resource/.test((err as Error).message))
      throw new BrokerLookupError(`the cluster at ${client.connection.server} serves no Brokers: apply Knative Eventing's CRDs (kubectl apply -f …/knative-eventing/).`);
    if (kube.isNotFound(err)) throw new BrokerLookupError(`Broker "${name}" not found in namespace "${ns}".`);
    throw new BrokerLookupError(`cannot look up Broker ${ns}/${name}: ${(err as Error).message}`);
  } finally {
    client.close();
  }
}

/** `--broker` as invoke uses it: the URL, or what to print and which exit code (INVOKE_EXIT's keys). */
export async function invokeTarget(raw: string): Promise<{ url: string } | { message: string; exit: 'usage' | 'errorStatus' | 'unreachable' }> {
  try {
    return { url: (await brokerTarget(raw)).href };
  } catch (err) {
    if (err instanceof InvokeUsageError) return { message: err.message, exit: 'usage' };
    if (err instanceof BrokerLookupError) return { message: err.message, exit: err.unreachable ? 'unreachable' : 'errorStatus' };
    throw err;
  }
}
