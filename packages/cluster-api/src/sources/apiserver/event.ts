/**
 * The events an ApiServerSource sends (Knative's pkg/adapter/apiserver/events): type
 * `dev.knative.apiserver.resource.add|update|delete` with the object as data (mode Resource) or
 * `dev.knative.apiserver.ref.add|update|delete` with a reference to it (mode Reference:
 * apiVersion, kind, name, namespace); source the API server's URL; subject the object's path in
 * Knative's selfLink form (`/apis/<apiVersion>/namespaces/<ns>/<kind in lower case>s/<name>`);
 * datacontenttype application/json.
 */
import type { KubeObject } from '../../api/meta.js';
import type { AttributeValue } from '../../broker/event/event.js';

export type Change = 'add' | 'update' | 'delete';
export type Mode = 'Resource' | 'Reference';

export const eventType = (mode: Mode, change: Change): string => `dev.knative.apiserver.${mode === 'Resource' ? 'resource' : 'ref'}.${change}`;

export const EventTypes = (mode: Mode): string[] => (['add', 'delete', 'update'] as const).map((c) => eventType(mode, c));

/** createSelfLink: the group's name alone gets `/versionUnknown`, and the plural is the kind plus `s`. */
export const subjectOf = (o: KubeObject): string => {
  const version = o.apiVersion.includes('.') && !o.apiVersion.includes('/') ? `${o.apiVersion}/versionUnknown` : o.apiVersion;
  return `/apis/${version}/namespaces/${o.metadata.namespace ?? ''}/${o.kind.toLowerCase()}s/${o.metadata.name}`;
};

export function apiServerEvent(source: string, mode: Mode, change: Change, o: KubeObject): { attributes: Record<string, AttributeValue>; data: Uint8Array } {
  const data = mode === 'Resource' ? o : { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: o.metadata.namespace };
  return {
    attributes: { type: eventType(mode, change), source, subject: subjectOf(o), datacontenttype: 'application/json' },
    data: Buffer.from(JSON.stringify(data)),
  };
}
