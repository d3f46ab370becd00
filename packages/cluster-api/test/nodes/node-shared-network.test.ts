/**
 * The shared pod network (what a node uses where only 127.0.0.1 is a loopback address, as on macOS):
 * pods report the node's IP, each function container listens on a node port of its own standing
 * for its PORT, and probes, pods/proxy and port-forward still reach `containerPort` 8080 through the
 * node agent, which knows the mapping. Two function pods on one node do not collide.
 */
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { isReady, podUntil, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster({ nodes: [{ name: 'mac', options: { networkMode: 'shared' } }] });

const fn = (name: string) => ({
  metadata: { name },
  spec: { containers: [{ name: 'fn', image: 'probe:v1', ports: [{ containerPort: 8080 }], readinessProbe: { httpGet: { path: '/health/readiness', port: 8080 }, periodSeconds: 1 } }] },
});

describe('shared pod network', () => {
  it('runs two function pods at the node\'s IP, each reached at containerPort 8080 through the agent', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, fn('one'));
    await kube.create(Resources.pods, fn('two'));
    for (const name of ['one', 'two']) {
      const pod = await podUntil(kube, name, 'Ready by its probe', isReady);
      expect(pod.status.podIP).toBe('127.0.0.1');
      const path = `/api/v1/namespaces/default/pods/${name}:8080/proxy/`;
      const answer = await until(`${name} through pods/proxy`, async () => (await kube.raw({ method: 'GET', path, accept: '*/*' })).body);
      expect(answer).toBe(`hello from ${name}`);
      const port = await until(`${name}'s PORT`, async () => (await kube.raw({ method: 'GET', path: `${path}env?name=PORT`, accept: '*/*' })).body);
      expect(Number(port)).not.toBe(8080);
    }
  });
});
