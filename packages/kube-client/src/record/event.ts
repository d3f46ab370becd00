/**
 * core/v1 Events as client-go's legacy recorder writes them: named `<object>.<hex nanoseconds>` in
 * the object's namespace (`default` for cluster-scoped objects), with `source` and
 * `reportingComponent`/`reportingInstance`, `firstTimestamp`/`lastTimestamp`/`count`.
 */
import type { ObjectReference } from '../core-v1.js';

export type { ObjectReference };

export type EventType = 'Normal' | 'Warning';

/** Who records: `component` (`kubelet`, `default-scheduler`, `deployment-controller`), the node it runs on, its instance. */
export interface EventSource {
  component: string;
  host?: string;
  instance?: string;
}

export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  source: { component: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
}

/** An object as it comes from the API: enough of it to refer to. */
export interface Referable {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

/** reference.GetReference: the reference to an object (a reference is kept as it is). */
export const referenceTo = (about: Referable | ObjectReference): ObjectReference => {
  if (!('metadata' in about) || !about.metadata) return about as ObjectReference;
  const { metadata: m, kind, apiVersion } = about as Referable;
  return { kind, namespace: m!.namespace, name: m!.name, uid: m!.uid, apiVersion, resourceVersion: m!.resourceVersion };
};

let lastNanos = 0n;
/** Unix nanoseconds, strictly increasing within the process: event names never repeat. */
const nanos = (): bigint => {
  const now = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  lastNanos = now > lastNanos ? now : lastNanos + 1n;
  return lastNanos;
};

/** `<object>.<hex nanoseconds>`, as client-go names an event. */
export const eventName = (about: ObjectReference): string => `${about.name ?? ''}.${nanos().toString(16)}`;

/** RFC 3339 to the second (metav1.Time). */
export const rfc3339 = (ms: number): string => `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;

/** The event `source` records now about `involved`. */
export function newEvent(source: EventSource, involved: ObjectReference, type: EventType, reason: string, message: string, now: number): CoreEvent {
  const at = rfc3339(now);
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(involved), namespace: involved.namespace || 'default' },
    involvedObject: involved,
    reason,
    message,
    source: { component: source.component, ...(source.host ? { host: source.host } : {}) },
    firstTimestamp: at,
    lastTimestamp: at,
    count: 1,
    type,
    reportingComponent: source.component,
    reportingInstance: source.instance ?? '',
  };
}
