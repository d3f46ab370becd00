/**
 * The node agent against a real cluster API (in process, with its controllers and the scheduler):
 * registration and heartbeat objects, a function pod running as a process (Running and Ready with
 * the kubelet's container status, reachable at podIP:8080), what the process is given (env with
 * every valueFrom kind, envFrom, the namespace's Services as variables, command/args, volumes, the service account token), and kwok's
 * simulated pods.
 */
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Resources } from '@func/kube-client';
import { condition, eventsOf, getText, isReady, type Obj, podUntil, useNodeCluster } from '../support/node-fixtures.js';
import { until } from '../../testing/src/poll.js';

const current = useNodeCluster();
const get = getText;

describe('registration', () => {
  it('registers a Node as the kubelet does, with a Lease and a pod CIDR from node IPAM', async () => {
    const node = await until('a pod CIDR', async () => {
      const n = await current.kube.get<Obj>(Resources.nodes, 'node-a');
      return n.spec?.podCIDR && n;
    });
    expect(node.spec.podCIDR).toMatch(/^127\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d+\.0\/20$/);
    expect(node.metadata.labels).toMatchObject({ 'kubernetes.io/hostname': 'node-a', 'kubernetes.io/os': 'linux' });
    expect(node.status.capacity).toMatchObject({ cpu: expect.stringMatching(/^\d+$/), memory: expect.stringMatching(/^\d+Ki$/), pods: '110' });
    // The agent's own share (--kube-reserved cpu=100m,memory=256Mi) and the 100Mi eviction reserve are not allocatable.
    expect(node.status.allocatable.cpu).toBe(`${Number(node.status.capacity.cpu) * 1000 - 100}m`);
    expect(parseInt(node.status.capacity.memory, 10) - parseInt(node.status.allocatable.memory, 10)).toBe((256 + 100) * 1024);
    expect(node.status.conditions.map((c: Obj) => [c.type, c.status, c.reason])).toEqual([
      ['MemoryPressure', 'False', 'KubeletHasSufficientMemory'], ['DiskPressure', 'False', 'KubeletHasNoDiskPressure'],
      ['PIDPressure', 'False', 'KubeletHasSufficientPID'], ['Ready', 'True', 'KubeletReady'],
    ]);
    expect(node.status.addresses).toEqual([{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: 'node-a' }]);
    expect(node.status.daemonEndpoints.kubeletEndpoint.Port).toBe(current.cluster.agents.get('node-a')!.port);
    expect(node.status.nodeInfo).toMatchObject({ operatingSystem: 'linux', containerRuntimeVersion: 'func://0.1.0', kubeletVersion: expect.stringMatching(/^v1\./) });
    const lease = await current.kube.get<Obj>(Resources.leases, 'node-a', { namespace: 'kube-node-lease' });
    expect(lease.spec).toMatchObject({ holderIdentity: 'node-a', leaseDurationSeconds: 40, renewTime: expect.stringMatching(/\.\d{6}Z$/) });
    expect(lease.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: node.metadata.uid }]);
  });
});

describe('function pods', () => {
  it('runs one as a process: scheduled, Running and Ready with the kubelet\'s container status, at podIP:8080', async () => {
    await current.kube.create(Resources.pods, { metadata: { name: 'fn' }, spec: { containers: [{ name: 'fn', image: 'probe:v1', ports: [{ containerPort: 8080 }] }] } });
    const pod = await podUntil(current.kube, 'fn', 'Running and Ready', isReady);
    expect(pod.spec.nodeName).toBe('node-a');
    expect(pod.status.podIP).toMatch(/^127\.\d+\.\d+\.\d+$/);
    expect(pod.status.podIPs).toEqual([{ ip: pod.status.podIP }]);
    expect(pod.status.hostIP).toBe('127.0.0.1');
    expect(pod.status.conditions.map((c: Obj) => `${c.type}=${c.status}`)).toEqual(['PodReadyToStartContainers=True', 'Initialized=True', 'Ready=True', 'ContainersReady=True', 'PodScheduled=True']);
    const [status] = pod.status.containerStatuses;
    expect(status).toMatchObject({
      name: 'fn', image: 'probe:v1', imageID: expect.stringMatching(/^probe@sha256:[0-9a-f]{64}$/), containerID: expect.stringMatching(/^func:\/\/[0-9a-f]{64}$/),
      ready: true, started: true, restartCount: 0, lastState: {}, state: { running: { startedAt: expect.any(String) } },
    });
    expect(status.volumeMounts).toEqual([{ name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true, recursiveReadOnly: 'Disabled' }]);
    expect(await until('the function answers', () => get(pod.status.podIP, '/').catch(() => undefined))).toBe('hello from fn');
    const reasons = (await until('the kubelet\'s events', async () => {
      const events = await eventsOf(current.kube, 'fn');
      return events.length >= 4 && events;
    })).map((e) => `${e.source?.component}/${e.reason}: ${e.message}`);
    expect(reasons).toEqual(expect.arrayContaining([
      'default-scheduler/Scheduled: Successfully assigned default/fn to node-a',
      'kubelet/Pulled: Container image "probe:v1" already present on machine',
      'kubelet/Created: Created container fn',
      'kubelet/Started: Started container fn',
    ]));
  });

  it('gives the process its environment: valueFrom of every kind, envFrom with a prefix, $(VAR), command and args', async () => {
    await current.kube.create(Resources.configMaps, { metadata: { name: 'settings' }, data: { greeting: 'hi', 'mode': 'fast' } });
    await current.kube.create(Resources.secrets, { metadata: { name: 'creds' }, stringData: { password: 's3cret' } });
    // A Service of the pod's namespace, known to the node (its service proxy listening) before the pod starts.
    const db = await current.kube.create<Obj>(Resources.services, { metadata: { name: 'my-db' }, spec: { selector: { app: 'db' }, ports: [{ name: 'sql', port: 5432, targetPort: 5432 }] } });
    const dbIP = db.spec.clusterIP as string;
    await until('the node proxying my-db', () => new Promise<boolean>((resolve) => {
      const socket = connect(5432, dbIP).once('connect', () => (socket.destroy(), resolve(true))).once('error', () => resolve(false));
    }));
    const env = [
      { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'settings', key: 'greeting' } } },
      { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'creds', key: 'password' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
      { name: 'TEAM', valueFrom: { fieldRef: { fieldPath: "metadata.labels['team']" } } },
      { name: 'MEMORY_MI', valueFrom: { resourceFieldRef: { resource: 'limits.memory', divisor: '1Mi' } } },
      { name: 'COMBINED', value: '$(GREETING)-$(POD_NAME)-$$(KEPT)' },
      { name: 'OPTIONAL', valueFrom: { configMapKeyRef: { name: 'settings', key: 'absent', optional: true } } },
    ];
    const container = { name: 'fn', image: 'probe:v1', env, envFrom: [{ prefix: 'CFG_', configMapRef: { name: 'settings' } }], resources: { limits: { memory: '256Mi' } }, args: ['/func/app', '--log-level', 'info'] };
    await current.kube.create(Resources.pods, { metadata: { name: 'envy', labels: { team: 'blue' } }, spec: { containers: [container] } });
    const pod = await podUntil(current.kube, 'envy', 'Ready', isReady);
    const ip = pod.status.podIP;
    // An empty value is an answer too: the probe wraps what it read so that '' ends the wait.
    const read = async (name: string) => (await until(`env ${name}`, async () => {
      const text = await get(ip, `/env?name=${name}`).catch(() => undefined);
      return text !== undefined && { text };
    })).text;
    expect(await read('GREETING')).toBe('hi');
    expect(await read('PASSWORD')).toBe('s3cret');
    expect(await read('POD_NAME')).toBe('envy');
    expect(await read('POD_IP')).toBe(ip);
    expect(await read('FUNC_HOST')).toBe(ip);
    expect(await read('TEAM')).toBe('blue');
    expect(await read('MEMORY_MI')).toBe('256');
    expect(await read('COMBINED')).toBe('hi-envy-$(KEPT)');
    expect(await read('CFG_mode')).toBe('fast');
    expect(await read('HOSTNAME')).toBe('envy');
    expect(await read('KUBERNETES_SERVICE_HOST')).toBe('127.0.0.1');
    expect(await read('MY_DB_SERVICE_HOST')).toBe(dbIP);
    // No cgroup holds a process: its V8 heap is bounded by limits.memory (256Mi) instead.
    const heap = Number(await get(ip, '/heap'));
    expect(heap).toBeGreaterThan(128 * 1024 * 1024);
    expect(heap).toBeLessThan(256 * 1024 * 1024);
    expect(await read('MY_DB_SERVICE_PORT_SQL')).toBe('5432');
    expect(await read('MY_DB_PORT_5432_TCP')).toBe(`tcp://${dbIP}:5432`);
    expect(await read('OPTIONAL')).toBe('');
    expect(await read('FUNC_LOG_LEVEL').catch(() => '')).toBe('');
  });

  it('mounts volumes where FUNC_MOUNT_ROOT says: configMap items, secret, downwardAPI, emptyDir and the service account token', async () => {
    const volumes = [
      { name: 'cfg', configMap: { name: 'settings', items: [{ key: 'greeting', path: 'hello.txt' }] } },
      { name: 'sec', secret: { secretName: 'creds' } },
      { name: 'info', downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] } },
      { name: 'scratch', emptyDir: {} },
    ];
    const volumeMounts = [
      { name: 'cfg', mountPath: '/etc/config' }, { name: 'sec', mountPath: '/etc/secret', readOnly: true },
      { name: 'info', mountPath: '/etc/podinfo' }, { name: 'scratch', mountPath: '/tmp/scratch' },
    ];
    await current.kube.create(Resources.pods, { metadata: { name: 'mounted', labels: { app: 'm', tier: 'x' } }, spec: { volumes, containers: [{ name: 'fn', image: 'probe:v1', volumeMounts }] } });
    const pod = await podUntil(current.kube, 'mounted', 'Ready', isReady);
    const file = (p: string) => until(`file ${p}`, () => get(pod.status.podIP, `/file?path=${encodeURIComponent(p)}`).catch(() => undefined));
    expect(await file('/etc/config/hello.txt')).toBe('hi');
    expect(await file('/etc/secret/password')).toBe('s3cret');
    expect(await file('/etc/podinfo/labels')).toBe('app="m"\ntier="x"');
    expect(await file('/var/run/secrets/kubernetes.io/serviceaccount/namespace')).toBe('default');
    const token = await file('/var/run/secrets/kubernetes.io/serviceaccount/token');
    // A TokenRequest bound to the pod (this in-process server authenticates nobody, so read the claims).
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    expect(claims.sub).toBe('system:serviceaccount:default:default');
    expect(claims['kubernetes.io'].pod).toEqual({ name: 'mounted', uid: pod.metadata.uid });
    const root = await get(pod.status.podIP, '/env?name=FUNC_MOUNT_ROOT');
    expect(root).toBe(join(current.cluster.dir, 'node-a', 'pods', pod.metadata.uid!, 'root', 'fn'));
  });
});

describe('mirror pods', () => {
  it('never runs a mirror pod from the API: with no static pod behind it, the agent deletes it as the kubelet deletes an orphan', async () => {
    const node = await current.kube.get<Obj>(Resources.nodes, 'node-a');
    const created = await current.kube.create<Obj>(Resources.pods, {
      metadata: { name: 'mirror', annotations: { 'kubernetes.io/config.mirror': 'abc' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-a', uid: node.metadata.uid!, controller: true }] },
      spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'nginx:1.27' }] },
    });
    await until('the orphaned mirror pod deleted', () => current.kube.get(Resources.pods, 'mirror').then(() => false, (err: { code?: number }) => err.code === 404));
    const events = await eventsOf(current.kube, 'mirror');
    expect(events.filter((e) => e.involvedObject?.uid === created.metadata.uid && e.source?.component === 'kubelet')).toEqual([]);
  });
});

describe('simulated images', () => {
  it('runs an nginx pod as kwok does: Running and Ready with kwok\'s fields (and an empty imageID), nothing started', async () => {
    await current.kube.create(Resources.pods, { metadata: { name: 'web' }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } });
    const pod = await podUntil(current.kube, 'web', 'Running', isReady);
    expect(pod.status.containerStatuses).toEqual([{ name: 'nginx', image: 'nginx:1.27', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: expect.any(String) } } }]);
    expect(pod.status.conditions.map((c: Obj) => c.type)).toEqual(['Initialized', 'Ready', 'ContainersReady', 'PodScheduled']);
    expect(condition(pod, 'Ready').status).toBe('True');
    await current.kube.delete(Resources.pods, 'web');
    await until('web gone', () => current.kube.get(Resources.pods, 'web').then(() => false, () => true));
  });
});
