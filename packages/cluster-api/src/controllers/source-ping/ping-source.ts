/**
 * Knative's PingSource reconciler and its mt-ping adapter in one: each PingSource's sink is
 * resolved (SinkProvided, `status.sinkUri`), and a source whose sink resolves is handed to the one
 * PingAdapter of this process (sources/ping/adapter.ts), which sends its events on schedule;
 * `Deployed` is True because that adapter runs here. A source deleted, or whose sink no longer
 * resolves, is unscheduled. A send that fails after the retries is a log line at `warn` and a
 * `Warning` Event on the source.
 */
import { objectKey, splitKey, writeStatus } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';
import type { Obj, ServingEnv } from '../../serving/kinds.js';
import { PingAdapter } from '../../sources/ping/adapter.js';
import { gatewayRouter } from '../../broker/dispatch/cluster-hosts.js';
import { PingEventType, pingSource } from '../../sources/ping/event.js';
import { SinkResolver } from '../../sources/sink.js';
import { OidcDisabled, sinkProvided, sourceStatus } from '../../sources/status.js';

export function startPingSourceController(env: ServingEnv): Controller {
  const sources = env.cache('pingSources');
  const recorder = env.ctx.events.recorder('pingsource-mt-adapter');
  const adapter = new PingAdapter(({ source, id, error }) => {
    if (!error) return;
    env.ctx.log?.({ level: 'warn', msg: 'ping event not delivered', namespace: source.namespace, name: source.name, id, sink: source.sinkUri, error });
    const o = sources.get(source.namespace, source.name);
    if (o) recorder.event(o, 'Warning', 'PingSourceSendFailed', `failed to send event ${id} to ${source.sinkUri}: ${error}`);
  }, env.ctx.gatewayUrl && gatewayRouter(env.ctx.gatewayUrl));
  const sinks = new SinkResolver(env.ctx, (key) => reconciler.enqueue(key));

  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const ps = sources.get(namespace, name) as Obj | undefined;
    if (!ps || ps.metadata.deletionTimestamp) {
      adapter.remove(key);
      sinks.untrack(key);
      return;
    }
    const sink = await sinks.resolve(key, ps.spec?.sink, namespace);
    if ('uri' in sink) adapter.upsert(key, { namespace, name, spec: { ...ps.spec, sink: undefined }, sinkUri: sink.uri });
    else adapter.remove(key);
    await writeStatus({ store: env.store('pingSources'), cache: sources }, ps, sourceStatus(ps, [
      { type: 'Deployed', status: 'True' }, OidcDisabled, sinkProvided(sink),
    ], sink, { ceAttributes: [{ type: PingEventType, source: pingSource(namespace, name) }] }));
  };

  const reconciler = startReconciler('source-ping-controller', reconcile, [{ cache: sources, keys: (o) => [objectKey(o)] }], { log: env.ctx.log });
  return {
    stop: async () => {
      await reconciler.stop();
      await adapter.stop();
    },
  };
}
