/**
 * A Trigger's delivery policy: `spec.delivery` of the Trigger, else of its Broker (Knative's
 * mt-broker takes the Trigger's DeliverySpec whole when it has one), checked as Knative's webhook
 * checks it and turned into numbers once, when the Trigger is (re)programmed.
 *
 * The dead-letter sink is chosen field by field as Knative's Trigger reconciler does: the Trigger's,
 * else the Broker's.
 */
import type { DeliverySpec, Destination } from '../types.js';
import { parseIsoDuration } from './duration.js';

/** Knative's shipped broker default (config-br-defaults): used when neither object has a DeliverySpec. */
export const DEFAULT_DELIVERY: Readonly<DeliverySpec> = { retry: 10, backoffPolicy: 'exponential', backoffDelay: 'PT0.2S' };
/** Per attempt, when `timeout` is not set (Knative sets none; an attempt that never ends would pin a slot). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** One backoff never exceeds this: exponential backoff of a large `retry` would otherwise wait for days. */
export const MAX_BACKOFF_MS = 3_600_000;

export interface DeliveryPolicy {
  /** Retries after the first attempt. */
  readonly retry: number;
  readonly policy: 'linear' | 'exponential';
  readonly delayMs: number;
  readonly timeoutMs: number;
  readonly deadLetterSink?: Destination;
}

/** A field of a spec that cannot be used, with why: the text a status condition carries. */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

function checkDestination(dest: Destination, path: string, out: FieldProblem[]): void {
  if (!dest.ref && !dest.uri) out.push({ path, message: 'expected exactly one, got neither: ref, uri' });
  if (dest.ref && !dest.ref.name) out.push({ path: `${path}.ref.name`, message: 'missing field(s)' });
}

/** The problems of one DeliverySpec, with Knative's field paths and wording. */
export function deliveryProblems(spec: DeliverySpec | undefined, path: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  if (!spec) return out;
  if (spec.deadLetterSink) checkDestination(spec.deadLetterSink, `${path}.deadLetterSink`, out);
  if (spec.retry !== undefined && (!Number.isInteger(spec.retry) || spec.retry < 0))
    out.push({ path: `${path}.retry`, message: `invalid value: ${String(spec.retry)}` });
  if (spec.backoffPolicy !== undefined && spec.backoffPolicy !== 'linear' && spec.backoffPolicy !== 'exponential')
    out.push({ path: `${path}.backoffPolicy`, message: `invalid value: ${String(spec.backoffPolicy)} (expected linear or exponential)` });
  if (spec.backoffDelay !== undefined && parseIsoDuration(String(spec.backoffDelay)) === undefined)
    out.push({ path: `${path}.backoffDelay`, message: `invalid value: ${String(spec.backoffDelay)} (expected an ISO 8601 duration such as PT0.2S)` });
  if (spec.timeout !== undefined && !parseIsoDuration(String(spec.timeout)))
    out.push({ path: `${path}.timeout`, message: `invalid value: ${String(spec.timeout)} (expected a positive ISO 8601 duration such as PT30S)` });
  return out;
}

/** The policy a Trigger delivers with; call only when `deliveryProblems` found nothing in either spec. */
export function deliveryPolicy(trigger: DeliverySpec | undefined, broker: DeliverySpec | undefined): DeliveryPolicy {
  const spec = trigger ?? broker ?? DEFAULT_DELIVERY;
  const deadLetterSink = trigger?.deadLetterSink ?? broker?.deadLetterSink;
  return {
    retry: spec.retry ?? 0,
    policy: spec.backoffPolicy === 'linear' ? 'linear' : 'exponential',
    delayMs: parseIsoDuration(spec.backoffDelay ?? 'PT0.2S') ?? 200,
    timeoutMs: spec.timeout ? parseIsoDuration(spec.timeout)! : DEFAULT_TIMEOUT_MS,
    ...(deadLetterSink ? { deadLetterSink } : {}),
  };
}

/**
 * The wait before retry number `n` (1 for the first retry), as the CRD documents it:
 * linear backoffDelay*n, exponential backoffDelay*2^n.
 */
export function backoffMs(policy: DeliveryPolicy, n: number): number {
  const factor = policy.policy === 'linear' ? n : 2 ** n;
  return Math.min(policy.delayMs * factor, MAX_BACKOFF_MS);
}
