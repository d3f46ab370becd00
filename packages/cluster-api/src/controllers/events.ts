/**
 * core/v1 Events as kube-controller-manager's recorders write them (client-go's legacy
 * EventRecorder): named `<object>.<hex nanoseconds>` in the object's namespace (`default` for
 * cluster-scoped objects), `source.component` and `reportingComponent` the controller's name
 * (`deployment-controller`), `firstTimestamp`/`lastTimestamp`/`count`, through the correlator.
 * Recording never blocks a controller: events are written in order by one background writer, and a
 * full queue drops new ones (client-go's broadcaster keeps 1000).
 */
import type { KubeObject } from '../api/meta.js';
import { isApiError } from '../api/errors.js';
import { timestamp } from '../registry/generic/meta.js';
import type { ApiClient, ResourceClient } from '../client/interface.js';
import { EventCorrelator, type CoreEvent } from './event-correlator.js';
import { inNamespace } from './shared.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  event(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

const MaxQueue = 1000;

let lastNanos = 0n;
/** Unix nanoseconds, strictly increasing within the process: event names never repeat. */
const nanos = (): bigint => {
  const now = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  lastNanos = now > lastNanos ? now : lastNanos + 1n;
  return lastNanos;
};

/** The ObjectReference an event is about (reference.GetReference). */
export const referenceTo = (o: KubeObject): Record<string, unknown> => ({
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
  uid: o.metadata.uid,
  apiVersion: o.apiVersion,
  resourceVersion: o.metadata.resourceVersion,
});

/** One writer for every recorder of the process: events reach storage in the order they were recorded. */
export class EventSink {
  private readonly queue: (() => Promise<void>)[] = [];
  private running?: Promise<void>;
  private closed = false;

  constructor(private readonly client: ApiClient, private readonly log?: (entry: Record<string, unknown>) => void) {}

  /** A recorder for `component`, writing through `client` (the component's own; default the sink's). */
  recorder(component: string, client: ApiClient = this.client): EventRecorder {
    const correlator = new EventCorrelator();
    return {
      event: (obj, type, reason, message) => {
        if (this.closed || this.queue.length >= MaxQueue) return;
        const namespace = obj.metadata.namespace || 'default';
        const name = () => `${obj.metadata.name}.${nanos().toString(16)}`;
        const at = timestamp();
        const event: CoreEvent = {
          apiVersion: 'v1', kind: 'Event', metadata: { name: name(), namespace },
          involvedObject: referenceTo(obj), reason, message, source: { component }, firstTimestamp: at, lastTimestamp: at, count: 1, type,
          reportingComponent: component, reportingInstance: '',
        };
        const decision = correlator.correlate(event, Date.now(), name);
        if (decision) this.enqueue(() => this.write(client, decision, correlator));
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  private enqueue(job: () => Promise<void>): void {
    this.queue.push(job);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    for (let job = this.queue.shift(); job; job = this.queue.shift()) await job();
  }

  private async write(client: ApiClient, decision: NonNullable<ReturnType<EventCorrelator['correlate']>>, correlator: EventCorrelator): Promise<void> {
    const events = client.find('', 'v1', 'events');
    if (!events) return;
    try {
      if ('create' in decision) return void (await events.create(inNamespace(decision.create.metadata.namespace), decision.create));
      await events.patch(inNamespace(decision.patch.namespace), decision.patch.name, 'merge', decision.patch.body).catch(async (err: unknown) => {
        if (!isApiError(err) || err.code !== 404) throw err;
        // Expired or deleted: start over, as client-go's recordToSink does.
        correlator.forget(decision.event);
        await createFresh(events, decision.event);
      });
    } catch (err) {
      // A namespace going away refuses its events: nothing to keep.
      if (isApiError(err) && (err.code === 403 || err.code === 404 || err.code === 409)) return;
      this.log?.({ level: 'warn', msg: 'event not recorded', reason: decision && 'create' in decision ? decision.create.reason : decision?.event.reason, error: String((err as Error)?.message ?? err) });
    }
  }
}

const createFresh = async (events: ResourceClient, e: CoreEvent): Promise<void> => {
  const fresh = { ...e, metadata: { name: `${String(e.involvedObject.name)}.${nanos().toString(16)}`, namespace: e.metadata.namespace }, count: 1, firstTimestamp: e.lastTimestamp };
  await events.create(inNamespace(e.metadata.namespace), fresh);
};
