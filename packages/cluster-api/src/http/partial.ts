/**
 * meta.k8s.io PartialObjectMetadata(List): an answer reduced to its objects' metadata, as
 * kube-apiserver's asPartialObjectMetadata / asPartialObjectMetadataList (endpoints/handlers/response.go)
 * make it for metadata-only clients (client-go's metadata client and informers, controller-runtime).
 * A Status passes unchanged; the list form of one object, or the single form of a list, is 406.
 */
import type { KubeList, KubeObject, ListMeta } from '../api/meta.js';
import { ApiError } from '../api/errors.js';
import type { ResourceDefinition } from '../registry/definition.js';
import type { Output } from './negotiate.js';

type Partial = NonNullable<Output['partial']>;

const isList = (value: unknown): value is KubeList => Array.isArray((value as KubeList).items);

/** How Kubernetes names the Go type in these messages (`*core.PodList`, `*apps.Deployment`). */
const goType = (def: ResourceDefinition, list: boolean): string =>
  `*${def.group ? def.group.split('.')[0] : 'core'}.${list ? def.listKind : def.kind}`;

const notAcceptable = (message: string): ApiError => new ApiError(406, 'NotAcceptable', message);

export const partialObject = (obj: KubeObject, version: string): KubeObject => ({
  kind: 'PartialObjectMetadata',
  apiVersion: `meta.k8s.io/${version}`,
  metadata: obj.metadata,
});

/** The answer `value` (an object, a list or a Status) in the metadata-only form asked for. */
export function toPartial(value: unknown, partial: Partial, def: ResourceDefinition): unknown {
  if ((value as { kind?: string }).kind === 'Status') return value;
  const list = isList(value);
  if (partial.kind === 'PartialObjectMetadata') {
    if (list) throw notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (${goType(def, true)})`);
    return partialObject(value as KubeObject, partial.version);
  }
  if (!list) throw notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (${goType(def, false)})`);
  const { resourceVersion, continue: next, remainingItemCount } = value.metadata;
  const metadata: ListMeta = { resourceVersion };
  if (next) metadata.continue = next;
  if (remainingItemCount !== undefined) metadata.remainingItemCount = remainingItemCount;
  // Items as Go's nil slice marshals when there are none: null (protobuf: no field).
  const items = value.items.length > 0 ? value.items.map((o) => partialObject(o, partial.version)) : null;
  return { kind: 'PartialObjectMetadataList', apiVersion: `meta.k8s.io/${partial.version}`, metadata, items };
}
