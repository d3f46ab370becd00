/**
 * The event a PingSource sends (Knative's mtping makeEvent): type `dev.knative.sources.ping`, source
 * `/apis/v1/namespaces/<namespace>/pingsources/<name>`, and as data `dataBase64` decoded, or `data`
 * (with `contentType: application/json` re-encoded as Go's json.Marshal writes a decoded object:
 * compact, top-level keys sorted), `datacontenttype` the spec's `contentType`.
 */
import type { AttributeValue } from '../../broker/event/event.js';

export const PingEventType = 'dev.knative.sources.ping';

export const pingSource = (namespace: string, name: string): string => `/apis/v1/namespaces/${namespace}/pingsources/${name}`;

export interface PingSpec {
  schedule?: string;
  timezone?: string;
  data?: string;
  dataBase64?: string;
  contentType?: string;
  ceOverrides?: { extensions?: Record<string, string> };
}

const sortedJson = (data: string): string => {
  const value = JSON.parse(data) as Record<string, unknown>;
  return JSON.stringify(Object.fromEntries(Object.keys(value).sort().map((k) => [k, value[k]])));
};

/** The attributes and data of the PingSource's events (the id and time are set per send). */
export function pingEvent(namespace: string, name: string, spec: PingSpec): { attributes: Record<string, AttributeValue>; data?: Uint8Array } {
  const attributes: Record<string, AttributeValue> = { type: PingEventType, source: pingSource(namespace, name) };
  let data: Uint8Array | undefined;
  if (spec.dataBase64) data = Buffer.from(spec.dataBase64, 'base64');
  else if (spec.data) data = Buffer.from(spec.contentType === 'application/json' ? sortedJson(spec.data) : spec.data);
  if (data && spec.contentType) attributes.datacontenttype = spec.contentType;
  return { attributes, ...(data && { data }) };
}
