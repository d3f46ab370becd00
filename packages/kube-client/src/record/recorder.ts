/**
 * client-go's tools/record: recorders (one per component) run their events through an
 * EventCorrelator each and hand them to one broadcaster, whose single writer creates or patches
 * them through a sink in the order they were recorded. Recording never blocks the caller: a full
 * queue (client-go's broadcaster keeps 1000) drops new events. The sink is any client: kube-client
 * over HTTP (`kubeEventSink`) or an in-process one.
 */
import type { KubeClient } from '../client.js';
import { Resources } from '../resources.js';
import { EventCorrelator, type Correlated } from './correlator.js';
import { eventName, newEvent, referenceTo, type CoreEvent, type EventSource, type EventType, type ObjectReference, type Referable } from './event.js';

/** Where events are written (client-go's EventSink). A rejection carries the HTTP status as a numeric `code`. */
export interface EventSink {
  create(namespace: string, event: CoreEvent): Promise<unknown>;
  patch(namespace: string, name: string, patch: Record<string, unknown>): Promise<unknown>;
}

export interface EventRecorder {
  /** Records an event about an object or a reference (with a `fieldPath`: a container of a pod). */
  event(about: Referable | ObjectReference, type: EventType, reason: string, message: string): void;
}

/** Events through kube-client's HTTP client. */
export const kubeEventSink = (kube: KubeClient): EventSink => ({
  create: (namespace, event) => kube.create(Resources.events, { ...event }, { namespace }),
  patch: (namespace, name, patch) => kube.patch(Resources.events, name, patch, { namespace, type: 'merge' }),
});

const MaxQueue = 1000;

const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
};

type Decision = NonNullable<Correlated>;

export class EventBroadcaster {
  private queue: (() => Promise<void>)[] = [];
  private running?: Promise<void>;
  private closed = false;

  constructor(private readonly sink: EventSink, private readonly log?: (entry: Record<string, unknown>) => void) {}

  /** A recorder for `source`, writing through `sink` (a component's own client; default the broadcaster's). */
  recorder(source: EventSource, sink: EventSink = this.sink): EventRecorder {
    const correlator = new EventCorrelator();
    return {
      event: (about, type, reason, message) => {
        if (this.closed || this.queue.length >= MaxQueue) return;
        const involved = referenceTo(about);
        const decision = correlator.correlate(newEvent(source, involved, type, reason, message, Date.now()), Date.now(), () => eventName(involved));
        if (decision) this.enqueue(() => this.write(sink, decision, correlator));
      },
    };
  }

  /** Stops recording; what is queued is dropped, the write under way finishes. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue = [];
    await this.running;
  }

  private enqueue(job: () => Promise<void>): void {
    this.queue.push(job);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  private async drain(): Promise<void> {
    for (let job = this.queue.shift(); job; job = this.queue.shift()) await job();
  }

  private async write(sink: EventSink, decision: Decision, correlator: EventCorrelator): Promise<void> {
    try {
      if ('create' in decision) return void (await sink.create(decision.create.metadata.namespace, decision.create));
      await sink.patch(decision.patch.namespace, decision.patch.name, decision.patch.body).catch(async (err: unknown) => {
        if (statusOf(err) !== 404) throw err;
        // Expired or deleted: start over, as client-go's recordToSink does.
        correlator.forget(decision.event);
        const e = decision.event;
        await sink.create(e.metadata.namespace, { ...e, metadata: { name: eventName(e.involvedObject), namespace: e.metadata.namespace }, count: 1, firstTimestamp: e.lastTimestamp });
      });
    } catch (err) {
      // A namespace going away refuses its events: nothing to keep.
      if ([403, 404, 409].includes(statusOf(err) ?? 0)) return;
      const reason = 'create' in decision ? decision.create.reason : decision.event.reason;
      this.log?.({ level: 'warn', msg: 'event not recorded', reason, error: String((err as Error)?.message ?? err) });
    }
  }
}
