/**
 * Channel, InMemoryChannel and Subscription `status` as Knative's reconcilers write them: the same
 * condition types and reasons, `address.url`, the Channel's `subscribers` and the Subscription's
 * `physicalSubscription`. Pure, as `status/status.ts` is for Brokers and Triggers.
 *
 * What Knative's webhook would refuse arrives here (the CRD schema admits it), so it becomes a False
 * condition naming the field: `subscriptionProblems` and `channelProblems` find it.
 */
import { deliveryProblems, type FieldProblem } from '../delivery/policy.js';
import { livingConditions, mark, type Mark, readyCondition } from '../status/conditions.js';
import type { Resolution } from '../status/status.js';
import type { Destination } from '../types.js';
import { backingReference } from './backing.js';
import { type Channel, ChannelKinds, type ChannelStatus, MESSAGING_V1, type SubscriberStatus, type Subscription, type SubscriptionStatus } from './types.js';

const describe = (problems: readonly FieldProblem[]): string => problems.map((p) => `${p.path}: ${p.message}`).join('; ');

/** A Destination's problems: neither `ref` nor `uri`, or a `ref` without what names it. */
export function destinationProblems(d: Destination | undefined, path: string, out: FieldProblem[]): void {
  if (d === undefined) return;
  if (typeof d !== 'object' || d === null || (!d.ref && !d.uri)) out.push({ path, message: 'expected at least one, got neither: ref, uri' });
  else if (d.ref && (!d.ref.name || !d.ref.kind || !d.ref.apiVersion)) out.push({ path: `${path}.ref`, message: 'missing field(s): apiVersion, kind, name' });
}

/** What Knative's Channel webhook refuses: a template of a kind not served here, a bad DeliverySpec. */
export function channelProblems(c: Channel): FieldProblem[] {
  const out = deliveryProblems(c.spec?.delivery, 'spec.delivery');
  const t = c.spec?.channelTemplate;
  if (c.kind === 'Channel' && t && (t.kind !== 'InMemoryChannel' || t.apiVersion !== MESSAGING_V1))
    out.push({ path: 'spec.channelTemplate', message: `channel template ${t.apiVersion ?? ''}/${t.kind ?? ''} is not supported: only ${MESSAGING_V1} InMemoryChannel` });
  return out;
}

/** What Knative's Subscription webhook refuses, with its field paths. */
export function subscriptionProblems(s: Subscription): FieldProblem[] {
  const out: FieldProblem[] = [];
  const ch = s.spec?.channel;
  if (!ch || typeof ch !== 'object') out.push({ path: 'spec.channel', message: 'missing field(s)' });
  else {
    const missing = (['apiVersion', 'kind', 'name'] as const).filter((f) => typeof ch[f] !== 'string' || ch[f] === '');
    if (missing.length > 0) out.push({ path: 'spec.channel', message: `missing field(s): ${missing.join(', ')}` });
    else if (ch.apiVersion !== MESSAGING_V1 || !(ch.kind! in ChannelKinds))
      out.push({ path: 'spec.channel', message: `${ch.apiVersion}/${ch.kind} is not a channel kind served here (${Object.keys(ChannelKinds).join(', ')} of ${MESSAGING_V1})` });
  }
  if (!s.spec?.subscriber && !s.spec?.reply) out.push({ path: 'spec', message: 'expected at least one, got none: reply, subscriber' });
  destinationProblems(s.spec?.subscriber, 'spec.subscriber', out);
  destinationProblems(s.spec?.reply, 'spec.reply', out);
  out.push(...deliveryProblems(s.spec?.delivery, 'spec.delivery'));
  return out;
}

export interface ChannelObservation {
  readonly channel: Channel;
  /** A Channel's backing InMemoryChannel with its status (backing.ts); undefined while there is none. Unused for an InMemoryChannel. */
  readonly backing?: Channel | undefined;
  /** An InMemoryChannel's address (a Channel's is its backing channel's). */
  readonly address: string | undefined;
  readonly stream: { readonly ready: true } | { readonly ready: false; readonly message: string };
  readonly deadLetterSink: Resolution | undefined;
  readonly problems: readonly FieldProblem[];
  readonly subscribers: readonly SubscriberStatus[];
  readonly now: string;
}

/** A Channel's BackingChannelReady: its backing channel's Ready, as Knative's `PropagateStatuses` copies it. */
function backingMark(backing: Channel | undefined): Mark {
  const ready = readyCondition(backing?.status?.conditions);
  if (!ready) return mark.unknown('BackingChannelReady', 'BackingChannelNotConfigured', 'BackingChannel has not yet been reconciled.');
  if (ready.status === 'True') return mark.true('BackingChannelReady');
  const reason = ready.reason ?? 'BackingChannelNotReady';
  return ready.status === 'False' ? mark.false('BackingChannelReady', reason, ready.message ?? '') : mark.unknown('BackingChannelReady', reason, ready.message ?? '');
}

export function channelStatus(o: ChannelObservation): ChannelStatus {
  const c = o.channel;
  const invalid = o.problems.length > 0 ? mark.false('', 'InvalidSpec', describe(o.problems)) : undefined;
  const dls = !o.deadLetterSink ? mark.true('DeadLetterSinkResolved', 'DeadLetterSinkNotConfigured', 'No dead letter sink is configured.')
    : 'uri' in o.deadLetterSink ? mark.true('DeadLetterSinkResolved') : mark.false('DeadLetterSinkResolved', 'Unable to get the dead letter sink\'s URI', o.deadLetterSink.error);
  const backing = c.kind === 'Channel' ? o.backing : undefined;
  const address = c.kind === 'Channel' ? backing?.status?.address?.url : o.address;
  let marks: Mark[];
  if (c.kind === 'Channel') {
    // A Channel reports its backing channel: its readiness and its address.
    const addressable = address ? mark.true('Addressable') : mark.false('Addressable', 'EmptyHostname', 'hostname is the empty string');
    marks = [invalid ? { ...invalid, type: 'BackingChannelReady' } : backingMark(backing), addressable, dls];
  } else {
    // An InMemoryChannel reports its dispatcher and Service: here, the log's stream and the ingress.
    const dispatcher = invalid ?? (o.stream.ready ? mark.true('') : mark.false('', 'StreamUnavailable', o.stream.message));
    const addressable = address ? mark.true('Addressable') : mark.false('Addressable', 'nil URL', 'URL is nil');
    marks = [addressable, mark.true('ChannelServiceReady'), dls, { ...dispatcher, type: 'DispatcherReady' }, mark.true('EndpointsReady'), mark.true('ServiceReady')];
  }
  const status: ChannelStatus = {
    ...(c.status?.annotations ? { annotations: c.status.annotations } : {}),
    conditions: livingConditions(marks, c.status?.conditions, o.now),
  };
  if (c.metadata.generation !== undefined) status.observedGeneration = c.metadata.generation;
  if (backing) status.channel = backingReference(c);
  if (address) {
    status.address = { name: 'http', url: address };
    status.addresses = [{ name: 'http', url: address }];
  }
  if (o.subscribers.length > 0) status.subscribers = [...o.subscribers];
  if (o.deadLetterSink && 'uri' in o.deadLetterSink) status.deadLetterSinkUri = o.deadLetterSink.uri;
  return status;
}

export interface SubscriptionObservation {
  readonly subscription: Subscription;
  /** The channel with its current status, or undefined when it does not exist. */
  readonly channel: Channel | undefined;
  readonly problems: readonly FieldProblem[];
  readonly subscriber: Resolution | undefined;
  readonly reply: Resolution | undefined;
  readonly deadLetterSink: Resolution | undefined;
  /** True once the channel's dispatcher delivers to it. */
  readonly programmed: boolean;
  readonly now: string;
}

function channelMark(o: SubscriptionObservation): Mark {
  const ref = o.subscription.spec?.channel;
  if (!o.channel) return mark.false('ChannelReady', 'ChannelReferenceFailed', `Failed to get Spec.Channel or backing channel: ${ref?.kind ?? 'channel'} "${ref?.name ?? ''}" not found`);
  const ready = readyCondition(o.channel.status?.conditions);
  if (ready?.status === 'True') return mark.true('ChannelReady');
  const why = ready?.message ? `: ${ready.message}` : '';
  return ready?.status === 'False' ? mark.false('ChannelReady', 'ChannelNotReady', `${o.channel.kind} "${o.channel.metadata.name}" is not ready${why}`)
    : mark.unknown('ChannelReady', 'ChannelNotReady', `${o.channel.kind} "${o.channel.metadata.name}" is not ready yet${why}`);
}

function referencesMark(o: SubscriptionObservation): Mark {
  if (o.problems.length > 0) return mark.false('ReferencesResolved', 'InvalidSpec', describe(o.problems));
  const failed = ([['subscriber', o.subscriber, 'SubscriberResolveFailed'], ['reply', o.reply, 'ReplyResolveFailed'], ['delivery.deadLetterSink', o.deadLetterSink, 'DeadLetterSinkResolveFailed']] as const)
    .find(([, r]) => r && 'error' in r);
  if (failed) return mark.false('ReferencesResolved', failed[2], `Failed to resolve spec.${failed[0]}: ${(failed[1] as { error: string }).error}`);
  return mark.true('ReferencesResolved');
}

export function subscriptionStatus(o: SubscriptionObservation): SubscriptionStatus {
  const s = o.subscription;
  // Knative's order: Ready names the first of these to fix.
  const marks: Mark[] = [
    referencesMark(o),
    o.programmed ? mark.true('AddedToChannel') : mark.unknown('AddedToChannel', 'SubscriptionNotMarkedReadyByChannel', 'The channel has not added the subscription yet.'),
    channelMark(o),
    mark.true('OIDCIdentityCreated', 'authentication-oidc feature disabled'),
  ];
  const uri = (r: Resolution | undefined) => (r && 'uri' in r ? r.uri : undefined);
  const physical = { subscriberUri: uri(o.subscriber), replyUri: uri(o.reply), deadLetterSinkUri: uri(o.deadLetterSink), delivery: s.spec?.delivery };
  const status: SubscriptionStatus = {
    ...(s.status?.annotations ? { annotations: s.status.annotations } : {}),
    conditions: livingConditions(marks, s.status?.conditions, o.now),
    physicalSubscription: Object.fromEntries(Object.entries(physical).filter(([, v]) => v !== undefined)),
  };
  if (s.metadata.generation !== undefined) status.observedGeneration = s.metadata.generation;
  return status;
}

/** The Subscription as its Channel's `status.subscribers` lists it. */
export function subscriberStatus(s: Subscription, status: SubscriptionStatus): SubscriberStatus {
  const added = status.conditions?.find((c) => c.type === 'AddedToChannel');
  const ready = readyCondition(status.conditions);
  return {
    ...(s.metadata.uid ? { uid: s.metadata.uid } : {}),
    ...(s.metadata.generation !== undefined ? { observedGeneration: s.metadata.generation } : {}),
    ready: added?.status ?? 'Unknown',
    ...(ready?.status !== 'True' && ready?.message ? { message: ready.message } : {}),
  };
}
