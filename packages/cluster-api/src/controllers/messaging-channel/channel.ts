/**
 * Knative's Channel reconciler (messaging.knative.dev/v1): a Channel whose `spec.channelTemplate`
 * is the default InMemoryChannel (none given, or `messaging.knative.dev/v1` InMemoryChannel) gets
 * its backing InMemoryChannel of the same name, controlled by it (broker/channel/backing.ts), kept
 * in line with its template and `delivery`. The broker serves the InMemoryChannel's stream and
 * writes both statuses: the Channel's reports its backing channel (`status.channel`, its address,
 * BackingChannelReady). A template of another kind makes nothing (the broker says why on the
 * Channel); the garbage collector removes the InMemoryChannel with its Channel.
 */
import type { KubeObject } from '../../api/meta.js';
import { backingChannel } from '../../broker/channel/backing.js';
import { channelProblems } from '../../broker/channel/status.js';
import type { Channel } from '../../broker/channel/types.js';
import { ensureChild } from '../../serving/children.js';
import { controllerKey, type Obj, type ServingEnv } from '../../serving/kinds.js';
import { splitKey } from '../context.js';
import { startReconciler } from '../reconciler.js';
import type { Controller } from '../shared.js';

export function startChannelController(env: ServingEnv): Controller {
  const channels = env.cache('channels');
  const reconcile = async (key: string): Promise<void> => {
    const { namespace, name } = splitKey(key);
    const ch = channels.get(namespace, name) as Obj | undefined;
    if (!ch || ch.metadata.deletionTimestamp) return;
    const channel = { ...ch, kind: 'Channel' } as unknown as Channel;
    if (channelProblems(channel).some((p) => p.path === 'spec.channelTemplate')) return;
    // Another's object of that name is left alone: the Channel then stays without a backing channel.
    await ensureChild(env, 'inMemoryChannels', ch, backingChannel(channel) as unknown as Obj, ['spec']);
  };
  const owner = controllerKey({ group: 'messaging.knative.dev', kind: 'Channel' });
  return startReconciler('messaging-channel-controller', reconcile, [
    { cache: channels },
    { cache: env.cache('inMemoryChannels'), keys: (o: KubeObject) => owner(o) },
  ], { log: env.ctx.log });
}
