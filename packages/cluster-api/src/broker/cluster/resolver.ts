/**
 * The SubscriberResolver of the cluster API. A `v1` Service resolves, as Knative's resolver does, to
 * the Service (`http://<svc>.<ns>.svc.cluster.local` there): here the broker must reach it without
 * cluster DNS, so it goes through the Service's Endpoints, to a ready address and the port behind
 * the Service's port 80 (else its first port), as kube-proxy would. Any other kind is an
 * Addressable: its `status.address.url` (a Knative Service, a Broker, …).
 *
 * Every ready endpoint is returned (`resolveAll`): the broker spreads deliveries over them.
 *
 * Services and Endpoints are cached by informers, and a change to one a Trigger refers to tells
 * the broker to resolve again; other Addressables are read when resolved (at every resync).
 */
import { Informer, KubeApiError, type KubeClient, type KubeObject } from '@func/kube-client';
import type { Logger } from '../metrics.js';
import type { ResolvedRef, SubscriberResolver } from '../resolver.js';
import { BrokerResources, referencedResource } from './resources.js';

interface ServicePort {
  name?: string;
  port?: number;
}
interface Service extends KubeObject {
  spec?: { type?: string; externalName?: string; ports?: ServicePort[] };
}
interface Endpoints extends KubeObject {
  subsets?: { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }[];
}

/** How long a resolution waits for the first lists of Services and Endpoints before saying so. */
const LIST_WAIT_MS = 5_000;

const isService = (ref: ResolvedRef) => ref.kind === 'Service' && ref.apiVersion === 'v1';
const host = (ip: string) => (ip.includes(':') ? `[${ip}]` : ip);

/** The Service's port Knative's URL reaches (80: the URL names none), else its first. */
export function servicePort(svc: Service): ServicePort | undefined {
  const ports = svc.spec?.ports ?? [];
  return ports.find((p) => p.port === 80) ?? ports[0];
}

/**
 * `http://<ready address>:<port>/` of every ready endpoint of `port` of the Service, from its
 * Endpoints, sorted (the first is the one a Trigger's `subscriberUri` names); throws why none.
 */
export function endpointUrls(what: string, port: ServicePort, endpoints: Endpoints | undefined): string[] {
  if (!endpoints) throw new Error(`${what} has no Endpoints`);
  const name = port.name ?? '';
  const urls = new Set<string>();
  for (const subset of endpoints.subsets ?? []) {
    const target = subset.ports?.find((p) => (p.name ?? '') === name);
    if (!target?.port) continue;
    for (const a of subset.addresses ?? []) if (a.ip) urls.add(`http://${host(a.ip)}:${target.port}/`);
  }
  if (urls.size === 0) throw new Error(`${what} has no ready endpoint for port ${name ? `"${name}"` : '(unnamed)'}`);
  return [...urls].sort();
}

export interface ClusterResolverOptions {
  readonly logger: Logger;
  readonly minBackoffMs?: number;
  readonly maxBackoffMs?: number;
}

export class ClusterResolver implements SubscriberResolver {
  private readonly services: Informer<Service>;
  private readonly endpoints: Informer<Endpoints>;
  private readonly listeners = new Set<() => void>();
  /** Services a Trigger or Broker refers to: only their changes matter. */
  private readonly referenced = new Set<string>();
  private synced = false;
  private listed: Promise<unknown> = Promise.resolve();
  private pending: NodeJS.Immediate | undefined;

  constructor(private readonly client: KubeClient, options: ClusterResolverOptions) {
    // namespace '': every namespace (the client's own namespace otherwise).
    const common = { namespace: '', minBackoffMs: options.minBackoffMs ?? 200, maxBackoffMs: options.maxBackoffMs ?? 5_000 };
    const onError = (what: string) => (err: unknown) => options.logger('warn', 'broker watch failed, retrying', { what, error: (err as Error).message });
    this.services = new Informer<Service>(client, BrokerResources.services, { ...common, onError: onError('watch services') });
    this.endpoints = new Informer<Endpoints>(client, BrokerResources.endpoints, { ...common, onError: onError('watch endpoints') });
    for (const informer of [this.services, this.endpoints] as Informer[]) {
      const changed = (o: KubeObject) => this.referenced.has(`${o.metadata?.namespace}/${o.metadata?.name}`) && this.notify();
      informer.on('add', changed).on('update', changed).on('delete', changed);
    }
  }

  start(): this {
    this.services.start();
    this.endpoints.start();
    this.listed = Promise.all([this.services.synced, this.endpoints.synced]).then(() => {
      this.synced = true;
      this.notify();
    });
    return this;
  }

  async resolve(ref: ResolvedRef): Promise<string> {
    return (await this.resolveAll(ref))[0]!;
  }

  /** A Service: every ready endpoint, as kube-proxy would spread over them; an Addressable: its one address. */
  async resolveAll(ref: ResolvedRef): Promise<string[]> {
    const missing = ['apiVersion', 'kind'].filter((f) => !ref[f as 'kind']);
    if (missing.length > 0) throw new Error(`ref: missing field(s): ${missing.join(', ')}`);
    return isService(ref) ? this.service(ref) : [await this.addressable(ref)];
  }

  private async service(ref: ResolvedRef): Promise<string[]> {
    const key = `${ref.namespace}/${ref.name}`;
    this.referenced.add(key);
    // At start-up the first lists are moments away: a Trigger is not marked unresolved for them.
    if (!this.synced) await Promise.race([this.listed, new Promise((r) => setTimeout(r, LIST_WAIT_MS).unref())]);
    if (!this.synced) throw new Error('Services and Endpoints are not listed yet');
    const svc = this.services.get(ref.name, ref.namespace);
    if (!svc) throw new Error(`services "${ref.name}" not found in namespace "${ref.namespace}"`);
    if (svc.spec?.type === 'ExternalName' && svc.spec.externalName) return [`http://${svc.spec.externalName}/`];
    const port = servicePort(svc);
    if (!port) throw new Error(`Service "${key}" has no ports`);
    return endpointUrls(`Service "${key}"`, port, this.endpoints.get(ref.name, ref.namespace));
  }

  private async addressable(ref: ResolvedRef): Promise<string> {
    const what = `${ref.kind} "${ref.namespace}/${ref.name}"`;
    let obj: KubeObject & { status?: { address?: { url?: unknown } } };
    try {
      obj = await this.client.get(referencedResource(ref.apiVersion!, ref.kind!), ref.name, { namespace: ref.namespace });
    } catch (err) {
      // The API's Status message is for users; a connection failure's text (addresses) is not.
      if (err instanceof KubeApiError) throw new Error(`failed to get ${what}: ${err.status.message ?? err.reason}`);
      throw new Error(`failed to get ${what}: the cluster API could not be reached`);
    }
    const url = obj.status?.address?.url;
    if (typeof url !== 'string' || url === '') throw new Error(`${what} is not addressable: it has no status.address.url`);
    return url;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    this.pending ??= setImmediate(() => {
      this.pending = undefined;
      for (const l of this.listeners) l();
    });
  }

  async stop(): Promise<void> {
    if (this.pending) clearImmediate(this.pending);
    this.listeners.clear();
    await Promise.all([this.services.stop(), this.endpoints.stop()]);
  }
}
