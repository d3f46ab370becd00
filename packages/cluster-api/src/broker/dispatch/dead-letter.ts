/**
 * The event a dead-letter sink receives: the failed event unchanged, plus Knative's three error
 * extensions, encoded as Knative's dispatcher encodes them:
 * - `knativeerrordest`: the URL the last attempt went to;
 * - `knativeerrorcode`: that attempt's HTTP status (500 when no response came back, as Knative);
 * - `knativeerrordata`: the response body with control characters removed, base64-encoded, the
 *   encoding cut at 1024 characters; left out when the body was empty.
 */
import type { CloudEvent } from '../event/event.js';

export const ERROR_DATA_MAX = 1024;

function printable(body: Buffer): Buffer {
  // Knative keeps bytes 31..127 only (header values cannot carry control characters).
  return body.every((b) => b >= 31 && b <= 127) ? body : Buffer.from(body.filter((b) => b >= 31 && b <= 127));
}

export function deadLetterEvent(event: CloudEvent, destination: string, code: number, body: Buffer): CloudEvent {
  const attributes = { ...event.attributes, knativeerrordest: destination, knativeerrorcode: code };
  const data = printable(body).toString('base64').slice(0, ERROR_DATA_MAX);
  const withData = data ? { ...attributes, knativeerrordata: data } : attributes;
  return event.data ? { attributes: withData, data: event.data } : { attributes: withData };
}
