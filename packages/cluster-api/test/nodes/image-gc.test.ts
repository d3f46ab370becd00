/**
 * The node agent's image garbage collection (src/node/image-gc.ts) with its containers: the image
 * a running pod was made from is in use and stays, an image nothing uses goes, and when the disk
 * cannot be brought down to the low threshold the Node gets the kubelet's FreeDiskSpaceFailed
 * Warning. The thresholds are 0 % so that this machine's real disk is "full".
 */
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { buildImage, ImageLayout } from '../../../oci/src/index.js';
import { isReady, podUntil, privatePodAddresses, useNodeCluster, type EventObj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster({ ...privatePodAddresses(), nodes: [{ name: 'node-a', options: { imageGc: { highThresholdPercent: 0, lowThresholdPercent: 0, minimumAgeMs: 0 } } }] });

describe('image garbage collection on a node', () => {
  it('keeps the image of a running pod, removes one nothing uses, and warns on the Node that the disk is still over the threshold', async () => {
    const { kube, cluster } = current;
    const layout = await ImageLayout.open(cluster.images);
    await buildImage(layout, { layers: [{ entries: [{ path: 'spare.txt', type: 'file', data: Buffer.from('spare') }] }], config: {}, tag: 'spare:1' });
    await kube.create(Resources.pods, { metadata: { name: 'p', namespace: 'default' }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'probe:v1' }] } }, { namespace: 'default' });
    await podUntil(kube, 'p', 'ready', isReady, 60_000);
    const agent = cluster.agents.get('node-a')!;
    expect(await agent.collectImages()).toEqual(['spare:1']);
    expect((await layout.tags())).toEqual(['probe:v1']);
    const warning = await until('FreeDiskSpaceFailed on the Node', async () => {
      const list = await kube.list<EventObj>(Resources.events, { namespace: 'default', fieldSelector: 'involvedObject.kind=Node,involvedObject.name=node-a' });
      return list.items.find((e) => e.reason === 'FreeDiskSpaceFailed');
    }, { timeoutMs: 15_000 });
    expect(warning.type).toBe('Warning');
    expect(warning.source?.component).toBe('kubelet');
    expect(warning.message).toMatch(/^Failed to garbage collect required amount of images\. Attempted to free \d+ bytes, but only found \d+ bytes eligible to free\.$/);
    // The pod still answers from its image; a second pass finds nothing more to remove.
    expect(await agent.collectImages()).toEqual([]);
    expect(isReady(await podUntil(kube, 'p', 'still ready', isReady))).toBe(true);
  }, 120_000);
});
