/**
 * A Channel's backing channel, as Knative's Channel reconciler makes it: an object of the kind its
 * `spec.channelTemplate` names (the default, and the only one served here, InMemoryChannel) with the
 * Channel's name and namespace, controlled by the Channel, its spec the template's spec with the
 * Channel's `delivery`. The Channel has no stream of its own: its address and readiness are its
 * backing channel's, and a Subscription to the Channel reads the backing channel's stream (pure:
 * the messaging-channel controller creates it, the broker's reconciler follows it).
 */
import type { KReference } from '../types.js';
import { type Channel, channelStream, MESSAGING_V1 } from './types.js';

const IMC = 'InMemoryChannel';

/** The backing InMemoryChannel of Channel `c`, as it should be. */
export function backingChannel(c: Channel): Channel {
  const { namespace, name, uid } = c.metadata;
  const spec = { ...((c.spec?.channelTemplate?.spec ?? {}) as Record<string, unknown>), ...(c.spec?.delivery ? { delivery: c.spec.delivery } : {}) };
  return {
    apiVersion: MESSAGING_V1,
    kind: IMC,
    metadata: {
      namespace,
      name,
      ...(uid ? { ownerReferences: [{ apiVersion: MESSAGING_V1, kind: 'Channel', name, uid, controller: true, blockOwnerDeletion: true }] } : {}),
    },
    spec,
  };
}

/** `status.channel` of Channel `c`: its backing channel. */
export const backingReference = (c: Channel): Required<Pick<KReference, 'apiVersion' | 'kind' | 'name' | 'namespace'>> =>
  ({ apiVersion: MESSAGING_V1, kind: IMC, name: c.metadata.name, namespace: c.metadata.namespace });

/** The stream events sent to Channel `ns/name` go to: its backing channel's. */
export const backingStream = (namespace: string, name: string): string => channelStream(IMC, namespace, name);

interface OwnerReference {
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

/** Whether `imc` is the backing channel of `c`: Channel `c` controls it. */
export function backs(imc: Channel, c: Channel): boolean {
  const refs = (imc.metadata.ownerReferences ?? []) as OwnerReference[];
  return imc.kind === IMC && refs.some((r) => r.controller === true && r.kind === 'Channel' && r.name === c.metadata.name && (!c.metadata.uid || r.uid === c.metadata.uid));
}
