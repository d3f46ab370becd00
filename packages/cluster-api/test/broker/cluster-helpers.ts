/**
 * The broker as a client of a real cluster API: a `serve()` over TLS with its generated kubeconfig,
 * kubectl against it, the broker's requests recorded (to check them against its ClusterRole), and
 * waits on what `kubectl get` would show.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient, resourceType, type RequestOptions } from '@func/kube-client';
import { resolveConfig } from '../../src/config.js';
import { parseRequestInfo } from '../../src/http/request-info.js';
import { serve, type Served } from '../../src/server.js';
import { runKubectl, type KubectlResult } from '../support/helpers.js';
import { until } from '../../testing/src/poll.js';

export const KNATIVE_CRDS = fileURLToPath(new URL('../../../../../shared/crds/knative-eventing', import.meta.url));
export const BROKER_CRD_FILE = join(KNATIVE_CRDS, 'broker.yaml');
export const TRIGGER_CRD_FILE = join(KNATIVE_CRDS, 'trigger.yaml');
export const KUBECTL = '/usr/bin/kubectl';

export const brokers = resourceType('eventing.knative.dev/v1', 'Broker', 'brokers');
export const triggers = resourceType('eventing.knative.dev/v1', 'Trigger', 'triggers');

export interface ApiCluster {
  readonly dir: string;
  readonly served: Served;
  readonly kubeconfig: string;
  /** An admin client for the test's own reads and writes. */
  readonly kube: KubeClient;
  kubectl(...args: string[]): Promise<KubectlResult>;
  /** `kubectl apply -f` of a manifest written to a file; fails the test on a non-zero exit. */
  apply(yaml: string): Promise<string>;
  close(): Promise<void>;
}

/** The API server alone (the broker under test is started by the test), SQLite in a temp dir. */
export async function startApi(): Promise<ApiCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'broker-api-'));
  const served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), broker: false }), () => {});
  const kubeconfig = served.kubeconfig!;
  const env = { PATH: process.env.PATH, HOME: dir, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache') };
  const kube = KubeClient.fromKubeconfig({ kubeconfig });
  let n = 0;
  const kubectl = (...args: string[]) => runKubectl(KUBECTL, env, args);
  return {
    dir,
    served,
    kubeconfig,
    kube,
    kubectl,
    apply: async (yaml) => {
      const file = join(dir, `manifest-${n++}.yaml`);
      writeFileSync(file, yaml);
      const r = await kubectl('apply', '-f', file);
      if (r.code !== 0) throw new Error(`kubectl apply failed: ${r.stderr}`);
      return r.stdout;
    },
    close: async () => {
      kube.close();
      await served.server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Recorded {
  verb: string;
  group: string;
  resource: string;
}

/** Records what each request of `client` asks for, as the authorizer would see it. */
export function recordRequests(client: KubeClient, into: Recorded[]): KubeClient {
  const transport = client.transport;
  const note = (opts: RequestOptions) => {
    const query = new URLSearchParams(Object.entries(opts.query ?? {}).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)]));
    const info = parseRequestInfo(opts.method, opts.path, query);
    if (info.type !== 'resource') return into.push({ verb: `nonresource ${opts.method}`, group: '', resource: opts.path });
    into.push({ verb: info.verb ?? opts.method, group: info.group, resource: info.subresource ? `${info.plural}/${info.subresource}` : info.plural });
  };
  const request = transport.request.bind(transport);
  const stream = transport.stream.bind(transport);
  transport.request = (opts) => (note(opts), request(opts));
  transport.stream = (opts) => (note(opts), stream(opts));
  return client;
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface Obj {
  metadata: { name: string; namespace: string; resourceVersion?: string; uid?: string; generation?: number };
  spec?: Record<string, unknown>;
  status?: { conditions?: Condition[]; address?: { url?: string }; subscriberUri?: string; deadLetterSinkUri?: string; observedGeneration?: number };
}

export const conditionOf = (o: Obj | undefined, type: string): Condition | undefined => o?.status?.conditions?.find((c) => c.type === type);

/** Waits until the object's condition `type` has `status` (and `reason`, when given); returns the object. */
export function waitCondition(kube: KubeClient, kind: 'Broker' | 'Trigger', namespace: string, name: string, type: string, status: string, reason?: string): Promise<Obj> {
  return until(`${kind} ${namespace}/${name} ${type}=${status}${reason ? ` (${reason})` : ''}`, async () => {
    const o = await kube.get<Obj>(kind === 'Broker' ? brokers : triggers, name, { namespace });
    const c = conditionOf(o, type);
    return c?.status === status && (reason === undefined || c.reason === reason) ? o : undefined;
  }, { timeoutMs: 30_000 });
}

type Spec = Record<string, unknown>;
const eventing = (kind: string, name: string, namespace?: string, spec?: Spec) =>
  ({ apiVersion: 'eventing.knative.dev/v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) }, ...(spec ? { spec } : {}) });
export const brokerOf = (name: string, namespace?: string, spec?: Spec) => eventing('Broker', name, namespace, spec);
export const triggerOf = (name: string, namespace: string | undefined, spec: Spec) => eventing('Trigger', name, namespace, spec);
/** Objects as one file for `kubectl apply -f`: a v1 List, in JSON. */
export const manifest = (...objects: object[]): string => `${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 1)}\n`;

/** A namespace created through the API. */
export async function namespace(kube: KubeClient, name: string): Promise<string> {
  await kube.create(resourceType('v1', 'Namespace', 'namespaces', false), { metadata: { name } });
  return name;
}
