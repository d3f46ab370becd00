/**
 * Channels and Subscriptions in the control loop: an InMemoryChannel is a stream of the event log,
 * as a Broker is; a Channel is backed by an InMemoryChannel of its name that it controls
 * (backing.ts), whose stream, address and readiness it reports as its own; a Subscription is a
 * durable consumer of the stream of the channel it names (a Channel's: its backing channel's) that
 * matches every event, delivered by the same workers as Triggers, with its reply POSTed to
 * `spec.reply` instead of routed in the stream.
 *
 * Each channel's status is computed first (a Subscription delivers only from a Ready channel), then
 * every Subscription's, then the channels' again with their `subscribers`: Knative's Subscription
 * reconciler writes them into the channel's `spec.subscribers` and the channel reports them; here
 * the dispatcher reads the Subscriptions themselves and the channel's status lists them the same way.
 *
 * Delivery: `spec.delivery` of the Subscription, else of its channel; neither set, one attempt
 * and no dead-letter sink (Knative's channels have no shipped default, unlike Brokers).
 */
import { deliveryPolicy } from '../delivery/policy.js';
import type { Program } from '../dispatch/worker.js';
import type { Reconciler } from '../reconcile.js';
import { resolveDestination, type SubscriberResolver } from '../resolver.js';
import type { BrokerConfig } from '../source.js';
import { readyCondition } from '../status/conditions.js';
import type { Resolution } from '../status/status.js';
import { type Destination, objectKey } from '../types.js';
import { backingStream, backs } from './backing.js';
import { type ChannelObservation, channelProblems, channelStatus, subscriberStatus, subscriptionProblems, subscriptionStatus } from './status.js';
import { type Channel, type ChannelKind, ChannelKinds, channelStream, MESSAGING_V1, type SubscriberStatus, type Subscription } from './types.js';

const matchAll = () => true;

/** The durable consumer of a Subscription on its channel's stream: a recreated one (new uid) starts afresh. */
export function subscriptionConsumer(s: Subscription): string {
  return `subscriptions/${objectKey(s.metadata)}${s.metadata.uid ? `@${s.metadata.uid}` : ''}`;
}

/** The stream events sent to channel `kind` `namespace/name` go to: an InMemoryChannel's own, a Channel's backing channel's. */
const dataStream = (kind: ChannelKind, namespace: string, name: string): string =>
  kind === 'Channel' ? backingStream(namespace, name) : channelStream(kind, namespace, name);

/** A channel with the status last computed, by kind, namespace and name. */
const channelObject = (r: Reconciler, kind: ChannelKind, namespace: string, name: string): Channel | undefined =>
  (kind === 'Channel' ? r.backedChannels : r.channels).get(channelStream(kind, namespace, name));

/** The channel a Subscription's `spec.channel` names and the stream it reads, when it names a channel kind served here. */
function channelOf(s: Subscription): { readonly kind: ChannelKind; readonly name: string; readonly stream: string } | undefined {
  const ref = s.spec?.channel;
  const kind = ref?.kind as ChannelKind | undefined;
  return kind && kind in ChannelKinds && typeof ref?.name === 'string' && ref.name ? { kind, name: ref.name, stream: dataStream(kind, s.metadata.namespace, ref.name) } : undefined;
}

/**
 * A channel this process serves resolves to the address it computed in this very pass (a
 * Sequence's reply to its next channel works at once, not after that channel's status is written
 * and read back); anything else through the resolver.
 */
function localResolver(r: Reconciler): SubscriberResolver {
  return {
    resolve: async (ref) => {
      const kind = ref.kind as ChannelKind | undefined;
      if (ref.apiVersion === MESSAGING_V1 && kind && kind in ChannelKinds) {
        const url = channelObject(r, kind, ref.namespace, ref.name)?.status?.address?.url;
        if (url) return url;
      }
      return r.deps.resolver.resolve(ref);
    },
  };
}

async function resolve(r: Reconciler, dest: Destination | undefined, namespace: string): Promise<Resolution | undefined> {
  return dest ? resolveDestination(dest, namespace, localResolver(r)) : undefined;
}

export async function reconcileChannels(r: Reconciler, config: BrokerConfig, now: string, wanted: Set<string>): Promise<void> {
  const seen = new Map<string, Channel>();
  /** By the stream each reports (a Channel: its backing channel's), with the map its status goes to. */
  const observations = new Map<string, { o: Omit<ChannelObservation, 'subscribers'>; stream: string; into: Map<string, Channel> }>();
  const all = config.channels ?? [];
  // InMemoryChannels first: a Channel reports its backing one as computed in this pass.
  for (const c of [...all.filter((x) => x.kind !== 'Channel'), ...all.filter((x) => x.kind === 'Channel')]) {
    const { namespace, name } = c.metadata;
    const key = channelStream(c.kind, namespace, name);
    seen.set(key, c);
    const backed = c.kind === 'Channel';
    const backing = backed ? r.channels.get(backingStream(namespace, name)) : undefined;
    const o = {
      channel: { ...c, status: r.previous<Channel['status']>(c.kind, objectKey(c.metadata)) ?? c.status },
      ...(backed ? { backing: backing && backs(backing, c) ? backing : undefined } : {}),
      address: backed ? undefined : r.deps.address(key),
      stream: backed ? ({ ready: true } as const) : await r.ensureStream(key),
      deadLetterSink: await resolve(r, c.spec?.delivery?.deadLetterSink, namespace),
      problems: channelProblems(c),
      now,
    };
    const into = backed ? r.backedChannels : r.channels;
    observations.set(key, { o, stream: dataStream(c.kind, namespace, name), into });
    into.set(key, { ...c, status: channelStatus({ ...o, subscribers: [] }) });
  }
  for (const [key, c] of [...r.channels, ...r.backedChannels]) if (!seen.has(key)) await r.removeStream(key, c.kind, objectKey(c.metadata));

  // A Channel and its backing channel list the same subscribers: those of the stream they share.
  const subscribers = new Map<string, SubscriberStatus[]>();
  for (const s of config.subscriptions ?? []) {
    wanted.add(subscriptionConsumer(s));
    const on = channelOf(s);
    const status = await reconcileSubscription(r, s, on, now);
    if (on) subscribers.set(on.stream, [...(subscribers.get(on.stream) ?? []), subscriberStatus(s, status)]);
  }

  for (const [key, { o, stream, into }] of observations) {
    const c = o.channel;
    const status = channelStatus({ ...o, subscribers: subscribers.get(stream) ?? [] });
    into.set(key, { ...seen.get(key)!, status });
    await r.write(c.kind, c.metadata.namespace, c.metadata.name, status);
  }
}

async function reconcileSubscription(r: Reconciler, s: Subscription, on: ReturnType<typeof channelOf>, now: string) {
  const ns = s.metadata.namespace;
  const stream = on?.stream;
  const channel = on ? channelObject(r, on.kind, ns, on.name) : undefined;
  const problems = subscriptionProblems(s);
  const subscriber = await resolve(r, s.spec?.subscriber, ns);
  const reply = await resolve(r, s.spec?.reply, ns);
  const dls = await resolve(r, s.spec?.delivery?.deadLetterSink ?? channel?.spec?.delivery?.deadLetterSink, ns);
  const resolved = [subscriber, reply, dls].every((x) => !x || 'uri' in x);
  const deliverable = problems.length === 0 && resolved && readyCondition(channel?.status?.conditions)?.status === 'True';
  const uri = (x: Resolution | undefined) => (x && 'uri' in x ? x.uri : undefined);
  // A reply to a channel or Broker served here is stored directly, as its ingress would store it.
  const replyUrl = uri(reply);
  const local = replyUrl && r.localStream(replyUrl);
  const replyTo = local ? { stream: local } : replyUrl ? { url: replyUrl } : undefined;
  const program: Program | undefined = deliverable
    ? {
        predicate: matchAll,
        subscriber: uri(subscriber),
        reply: replyTo,
        // Neither object sets delivery: one attempt (an empty spec, not the Broker's shipped default).
        policy: deliveryPolicy(s.spec.delivery, channel!.spec?.delivery ?? {}),
        ...(uri(dls) ? { deadLetterSink: uri(dls) } : {}),
      }
    : undefined;
  const key = objectKey(s.metadata);
  // No channel to read from: '' is no stream, so a worker kept from an earlier channel pauses.
  const programmed = await r.program(subscriptionConsumer(s), stream ?? '', { broker: stream ?? '', trigger: `subscriptions/${key}` }, `Subscription/${key}`, program);
  const status = subscriptionStatus({
    subscription: { ...s, status: r.previous('Subscription', key) ?? s.status },
    channel,
    problems,
    subscriber,
    reply,
    deadLetterSink: dls,
    programmed,
    now,
  });
  await r.write('Subscription', ns, s.metadata.name, status);
  return status;
}
