/**
 * Channels and Subscriptions in the control loop: a channel is a stream of the event log, as a
 * Broker is; a Subscription is a durable consumer of it that matches every event, delivered by the
 * same workers as Triggers, with its reply POSTed to `spec.reply` instead of routed in the stream.
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
import { channelProblems, channelStatus, subscriberStatus, subscriptionProblems, subscriptionStatus } from './status.js';
import { type Channel, type ChannelKind, ChannelKinds, channelStream, MESSAGING_V1, type SubscriberStatus, type Subscription } from './types.js';

const matchAll = () => true;

/** The durable consumer of a Subscription on its channel's stream: a recreated one (new uid) starts afresh. */
export function subscriptionConsumer(s: Subscription): string {
  return `subscriptions/${objectKey(s.metadata)}${s.metadata.uid ? `@${s.metadata.uid}` : ''}`;
}

/** The stream a Subscription's `spec.channel` names, when it names a channel kind served here. */
function channelOf(s: Subscription): string | undefined {
  const ref = s.spec?.channel;
  const kind = ref?.kind as ChannelKind | undefined;
  return kind && kind in ChannelKinds && typeof ref?.name === 'string' && ref.name ? channelStream(kind, s.metadata.namespace, ref.name) : undefined;
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
        const url = r.channels.get(channelStream(kind, ref.namespace, ref.name))?.status?.address?.url;
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
  const observations = new Map<string, Omit<Parameters<typeof channelStatus>[0], 'subscribers'>>();
  for (const c of config.channels ?? []) {
    const key = channelStream(c.kind, c.metadata.namespace, c.metadata.name);
    seen.set(key, c);
    const stream = await r.ensureStream(key);
    const dls = c.spec?.delivery?.deadLetterSink;
    const o = {
      channel: { ...c, status: r.previous<Channel['status']>(c.kind, objectKey(c.metadata)) ?? c.status },
      address: r.deps.address(key),
      stream,
      deadLetterSink: await resolve(r, dls, c.metadata.namespace),
      problems: channelProblems(c),
      now,
    };
    observations.set(key, o);
    r.channels.set(key, { ...c, status: channelStatus({ ...o, subscribers: [] }) });
  }
  for (const [key, c] of [...r.channels]) if (!seen.has(key)) await r.removeStream(key, c.kind, objectKey(c.metadata));

  const subscribers = new Map<string, SubscriberStatus[]>();
  for (const s of config.subscriptions ?? []) {
    wanted.add(subscriptionConsumer(s));
    const stream = channelOf(s);
    const status = await reconcileSubscription(r, s, stream, now);
    if (stream) subscribers.set(stream, [...(subscribers.get(stream) ?? []), subscriberStatus(s, status)]);
  }

  for (const [key, o] of observations) {
    const c = o.channel;
    const status = channelStatus({ ...o, subscribers: subscribers.get(key) ?? [] });
    r.channels.set(key, { ...seen.get(key)!, status });
    await r.write(c.kind, c.metadata.namespace, c.metadata.name, status);
  }
}

async function reconcileSubscription(r: Reconciler, s: Subscription, stream: string | undefined, now: string) {
  const ns = s.metadata.namespace;
  const channel = stream ? r.channels.get(stream) : undefined;
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
