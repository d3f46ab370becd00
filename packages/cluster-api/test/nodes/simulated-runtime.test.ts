/**
 * `--container-runtime simulated` (NodeAgentOptions.containerRuntime 'simulated'): every image runs
 * as kwok runs it, function images too: Running and Ready with kwok's fields, no process started.
 */
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { isReady, podUntil, useNodeCluster } from '../support/node-fixtures.js';

const current = useNodeCluster({ nodes: [{ name: 'sim', options: { containerRuntime: 'simulated' } }] });

describe('the simulated runtime as the node\'s own', () => {
  it('a function image is simulated: Ready with kwok\'s container status (no container id: nothing started), the only runtime of the node', async () => {
    await current.kube.create(Resources.pods, { metadata: { name: 'fn' }, spec: { containers: [{ name: 'fn', image: 'probe:v1' }] } });
    const pod = await podUntil(current.kube, 'fn', 'Ready', isReady);
    expect(pod.status.containerStatuses).toEqual([{ name: 'fn', image: 'probe:v1', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: expect.any(String) } } }]);
    expect(current.cluster.agents.get('sim')!.handlers.map((h) => h.runtime.name)).toEqual(['simulated']);
  });
});
