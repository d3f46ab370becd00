/**
 * How a source's adapter sends an event, as Knative's adapters do through the CloudEvents SDK
 * client: `specversion` 1.0, a fresh UUID `id` and the current `time` when the event has none, the
 * source's `ceOverrides.extensions` set over its attributes, then one POST in binary mode (the
 * broker's sender, broker/dispatch/sender.ts) retried with exponential back-off
 * (`ContextWithRetriesExponentialBackoff(50ms, 5)`: up to 5 retries, 50 ms doubling) while the
 * answer is one the data plane retries (timeouts, 404, 409, 429, 5xx). A cluster-local sink (a
 * Knative Service's address) goes through the serving gateway where `serve` runs one (`router`).
 */
import { randomUUID } from 'node:crypto';
import type { AttributeValue, CloudEvent } from '../broker/event/event.js';
import { send, type Outcome } from '../broker/dispatch/sender.js';
import type { Router } from '../broker/dispatch/cluster-hosts.js';

export const Retries = 5;
export const BackoffMs = 50;
const TimeoutMs = 30_000;
const MaxReplyBytes = 4 * 1024 * 1024;

export interface Overrides {
  extensions?: Record<string, string>;
}

/** The event with its id, time and the overrides' extensions (the overrides win, as Knative's SetExtension). */
export const withContext = (attributes: Record<string, AttributeValue>, data: Uint8Array | undefined, overrides: Overrides | undefined): CloudEvent => ({
  attributes: {
    specversion: '1.0', id: randomUUID(), time: new Date().toISOString(), ...attributes,
    ...Object.fromEntries(Object.entries(overrides?.extensions ?? {}).filter(([, v]) => typeof v === 'string')),
  },
  ...(data && { data }),
});

/** Sends `event` to `url`, retrying as above; the last outcome (`done` once the sink took it). */
export async function emit(url: string, event: CloudEvent, sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref()), router?: Router): Promise<Outcome> {
  const options = { timeoutMs: TimeoutMs, preferReply: false, maxReplyBytes: MaxReplyBytes, router };
  let outcome: Outcome = await send(url, event, options);
  for (let n = 0; n < Retries && outcome.kind === 'retry'; n++) {
    await sleep(BackoffMs * 2 ** n);
    outcome = await send(url, event, options);
  }
  return outcome;
}

/** What a log line says about an outcome that was not a success. */
export const failure = (o: Outcome): string | undefined => (o.kind === 'retry' || o.kind === 'fail' ? o.why : undefined);
