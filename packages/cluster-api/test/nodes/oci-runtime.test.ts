/**
 * The oci runtime on a real machine (root, runc, conmon, the CNI plugins): pods run under runc in
 * network namespaces of their own on the node's bridge, with IPs of the node's pod CIDR. An image
 * built here from busybox-static and pushed to a real docker-registry is pulled and runs and logs;
 * a function image runs with the node's Node.js, as a non-root uid, and cannot read the node's
 * secrets; runAsNonRoot with a root image is CreateContainerConfigError; pods reach each other by
 * pod IP; port 8080 of the host stays free while function pods listen on theirs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { privatePodCidr } from '../../src/node/runtime/oci/pod-cidr.js';
import type { RunningRegistry } from '../../../oci/test/registry-server.js';
import { busyboxInRegistry, execIn, ociMissing, ociOf } from '../support/oci-fixtures.js';
import { eventsOf, isReady, podUntil, useNodeCluster, type Obj } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const cidr = privatePodCidr(`oci-runtime-test-${process.pid}`);

describe.skipIf(ociMissing)(`the oci runtime${ociMissing ? ` (skipped: ${ociMissing})` : ''}`, () => {
  const current = useNodeCluster({ nodes: [{ name: 'oci-a', options: { containerRuntime: 'oci' } }], nodeControllers: { clusterCidr: cidr, nodeCidrMaskSize: 24 } });
  let registry: RunningRegistry;
  let busybox: string;
  const agent = () => current.cluster.agents.get('oci-a')!;

  beforeAll(async () => {
    ({ registry, ref: busybox } = await busyboxInRegistry(join(current.cluster.dir, 'scratch')));
  }, 60_000);
  afterAll(async () => {
    await registry?.stop();
  });

  it('pulls an image from a registry and runs it under runc in the pod\'s own network namespace, with an IP of the node\'s pod CIDR; its log is the container\'s output', async () => {
    const { kube } = current;
    await kube.create(Resources.pods, { metadata: { name: 'bb' }, spec: { containers: [{ name: 'bb', image: busybox, command: ['sh', '-c', 'echo hello from busybox; id; exec sleep 3600'] }] } });
    const pod = await podUntil(kube, 'bb', 'Ready', isReady, 60_000);
    expect(pod.status.podIP.startsWith(cidr.split('.').slice(0, 2).join('.') + '.')).toBe(true);
    expect(pod.status.containerStatuses[0].containerID).toMatch(/^func:\/\/[0-9a-f]{64}$/);
    expect(pod.status.qosClass).toBe('BestEffort');
    const reasons = (await eventsOf(kube, 'bb')).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Pulling', 'Pulled', 'Created', 'Started']));
    const log = async () => (await (await kube.logs('bb', {})).setEncoding('utf8').toArray()).join('');
    await until('bb logged', async () => (await log()).includes('uid=0(root)'));
    expect(await log()).toBe('hello from busybox\nuid=0(root) gid=0(root) groups=0(root)\n');
  }, 90_000);
});
