/**
 * Sequence and Parallel `status` as Knative's reconcilers write them, from their children as they
 * are: each channel and Subscription named with a copy of its Ready condition (`channelStatuses`,
 * `subscriptionStatuses` for a Sequence; `ingressChannelStatus`, `branchStatuses` for a Parallel),
 * `ChannelsReady`, `SubscriptionsReady`, `Addressable` (the first channel's address) and `Ready`.
 * Pure; a spec Knative's webhook would refuse makes every condition name it.
 */
import type { FieldProblem } from '../delivery/policy.js';
import { livingConditions, mark, type Mark, readyCondition } from '../status/conditions.js';
import type { Condition } from '../types.js';
import type { Children } from './children.js';
import type { ChannelStatusRef, FlowStatus, ObjectRef, SubscriptionStatusRef } from './types.js';

type Child = { apiVersion?: string; kind?: string; metadata: { name: string; namespace: string }; status?: { conditions?: Condition[]; address?: { url?: string } } };

export interface FlowObservation {
  readonly flow: { metadata: { generation?: number }; status?: FlowStatus };
  readonly kind: 'Sequence' | 'Parallel';
  readonly problems: readonly FieldProblem[];
  /** The children wanted, and each as read back (undefined: not there yet, or not ours, with why). */
  readonly wanted: Children;
  readonly actual: (child: Child) => Child | { error: string } | undefined;
  readonly now: string;
}

const ref = (c: Child): ObjectRef => ({ apiVersion: c.apiVersion ?? '', kind: c.kind ?? '', name: c.metadata.name, namespace: c.metadata.namespace });

function readyOf(o: FlowObservation, c: Child): Condition {
  const got = o.actual(c);
  if (!got) return { type: 'Ready', status: 'Unknown', reason: 'NotFound', message: `${c.kind} "${c.metadata.name}" does not exist yet` };
  if ('error' in got) return { type: 'Ready', status: 'False', reason: 'NotOwned', message: got.error };
  const r = readyCondition(got.status?.conditions);
  return r ? { ...r } : { type: 'Ready', status: 'Unknown', reason: 'NoReady', message: `${c.kind} does not have Ready condition` };
}

function allReady(refs: readonly { ready: Condition }[], type: string, reason: string, what: string): Mark {
  if (refs.length > 0 && refs.every((r) => r.ready.status === 'True')) return mark.true(type);
  const bad = refs.find((r) => r.ready.status === 'False') ?? refs.find((r) => r.ready.status !== 'True');
  const why = bad?.ready.message ? `: ${bad.ready.message}` : '';
  return bad?.ready.status === 'False' ? mark.false(type, reason, `${what} are not ready yet, or there are none${why}`) : mark.unknown(type, reason, `${what} are not ready yet, or there are none${why}`);
}

export function flowStatus(o: FlowObservation): FlowStatus {
  const problems = o.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  const channels: ChannelStatusRef[] = o.wanted.channels.map((c) => ({ channel: ref(c), ready: readyOf(o, c) }));
  const subscriptions: SubscriptionStatusRef[] = o.wanted.subscriptions.map((s) => ({ subscription: ref(s), ready: readyOf(o, s) }));
  const first = o.wanted.channels[0] && o.actual(o.wanted.channels[0]);
  const url = first && !('error' in first) ? first.status?.address?.url : undefined;
  const marks: Mark[] = problems
    ? [mark.false('ChannelsReady', 'InvalidSpec', problems), mark.false('SubscriptionsReady', 'InvalidSpec', problems), mark.false('Addressable', 'InvalidSpec', problems)]
    : [
        allReady(channels, 'ChannelsReady', 'ChannelsNotReady', 'Channels'),
        allReady(subscriptions, 'SubscriptionsReady', 'SubscriptionsNotReady', 'Subscriptions'),
        url ? mark.true('Addressable') : mark.unknown('Addressable', 'emptyAddress', 'addressable is nil'),
      ];
  const status: FlowStatus = { conditions: livingConditions(marks, o.flow.status?.conditions, o.now) };
  if (o.flow.metadata.generation !== undefined) status.observedGeneration = o.flow.metadata.generation;
  if (url) {
    status.address = { name: 'http', url };
    status.addresses = [{ name: 'http', url }];
  }
  if (problems) return status;
  if (o.kind === 'Sequence') return { ...status, channelStatuses: channels, subscriptionStatuses: subscriptions };
  return {
    ...status,
    ingressChannelStatus: channels[0]!,
    branchStatuses: channels.slice(1).map((c, i) => ({ filterSubscriptionStatus: subscriptions[2 * i]!, filterChannelStatus: c, subscriptionStatus: subscriptions[2 * i + 1]! })),
  };
}
