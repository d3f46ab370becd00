/**
 * The Channels and Subscriptions a Sequence or Parallel is made of, named and wired as Knative's
 * sequence and parallel reconcilers make them (pure: the controllers create and update them).
 *
 * Sequence `s` with steps 0…n-1: channel `s-kn-sequence-i` per step; Subscription `s-kn-sequence-i`
 * on channel i to step i, its reply channel i+1, the last one's the Sequence's `reply`. The
 * Sequence's address is channel 0's.
 *
 * Parallel `p`: an ingress channel `p-kn-parallel`; per branch i a channel `p-kn-parallel-i`, a
 * filter Subscription `p-kn-parallel-filter-i` on the ingress channel to the branch's `filter`
 * (none: every event passes) replying to channel i, and a Subscription `p-kn-parallel-i` on
 * channel i to the branch's `subscriber`, its reply the branch's, else the Parallel's. A filter
 * passes an event by answering it (200 with the event, or another), and drops it with an empty 2xx.
 */
import type { Channel, Subscription } from '../channel/types.js';
import type { Destination, ObjectMeta } from '../types.js';
import type { ChannelTemplate, ObjectRef, Parallel, Sequence } from './types.js';
import { DEFAULT_CHANNEL_TEMPLATE } from './validation.js';

type Owner = Sequence | Parallel;

export interface Children {
  /** In status order: Sequence, one per step; Parallel, the ingress channel then one per branch. */
  readonly channels: Channel[];
  /** Sequence, one per step; Parallel, per branch its filter Subscription then its Subscription. */
  readonly subscriptions: Subscription[];
}

const template = (o: Owner): Required<Pick<ChannelTemplate, 'apiVersion' | 'kind'>> & ChannelTemplate =>
  ({ ...DEFAULT_CHANNEL_TEMPLATE, ...o.spec.channelTemplate }) as Required<Pick<ChannelTemplate, 'apiVersion' | 'kind'>> & ChannelTemplate;

function meta(o: Owner, name: string, kind: 'Sequence' | 'Parallel'): ObjectMeta {
  return {
    name,
    namespace: o.metadata.namespace,
    ownerReferences: [{ apiVersion: 'flows.knative.dev/v1', kind, name: o.metadata.name, uid: o.metadata.uid, controller: true, blockOwnerDeletion: true }],
  };
}

function channel(o: Owner, name: string, kind: 'Sequence' | 'Parallel'): Channel {
  const t = template(o);
  return { apiVersion: t.apiVersion, kind: t.kind as Channel['kind'], metadata: meta(o, name, kind), spec: { ...(t.spec ?? {}) } };
}

/** A reference to a channel of the template's kind in the owner's namespace. */
export function channelRef(o: Owner, name: string): ObjectRef {
  const t = template(o);
  return { apiVersion: t.apiVersion, kind: t.kind, name, namespace: o.metadata.namespace };
}

const only = (d: Destination): Destination => ({ ...(d.ref ? { ref: d.ref } : {}), ...(d.uri ? { uri: d.uri } : {}) });

function subscription(o: Owner, name: string, kind: 'Sequence' | 'Parallel', on: string, spec: Omit<Subscription['spec'], 'channel'>): Subscription {
  const { namespace: _ns, ...ref } = channelRef(o, on);
  const clean = Object.fromEntries(Object.entries(spec).filter(([, v]) => v !== undefined));
  return { apiVersion: 'messaging.knative.dev/v1', kind: 'Subscription', metadata: meta(o, name, kind), spec: { channel: ref, ...clean } };
}

export function sequenceChildren(s: Sequence): Children {
  const name = (i: number) => `${s.metadata.name}-kn-sequence-${i}`;
  const steps = s.spec.steps;
  return {
    channels: steps.map((_, i) => channel(s, name(i), 'Sequence')),
    subscriptions: steps.map((step, i) =>
      subscription(s, name(i), 'Sequence', name(i), {
        subscriber: only(step),
        reply: i + 1 < steps.length ? { ref: channelRef(s, name(i + 1)) } : s.spec.reply,
        delivery: step.delivery,
      }),
    ),
  };
}

export function parallelChildren(p: Parallel): Children {
  const ingress = `${p.metadata.name}-kn-parallel`;
  const branch = (i: number) => `${p.metadata.name}-kn-parallel-${i}`;
  return {
    channels: [channel(p, ingress, 'Parallel'), ...p.spec.branches.map((_, i) => channel(p, branch(i), 'Parallel'))],
    subscriptions: p.spec.branches.flatMap((b, i) => [
      subscription(p, `${p.metadata.name}-kn-parallel-filter-${i}`, 'Parallel', ingress, { subscriber: b.filter && only(b.filter), reply: { ref: channelRef(p, branch(i)) } }),
      subscription(p, branch(i), 'Parallel', branch(i), { subscriber: only(b.subscriber), reply: b.reply ?? p.spec.reply, delivery: b.delivery }),
    ]),
  };
}
