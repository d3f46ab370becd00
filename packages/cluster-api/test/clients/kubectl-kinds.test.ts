/**
 * kubectl with the kinds of issue 18, against `serve()` as a user runs it (TLS, generated kubeconfig),
 * on a real SQLite file and on a real etcd: `create deployment|configmap|job|cronjob` (kubectl 1.32
 * posts them in protobuf), `get` with Kubernetes' columns (`-o wide` too), `get all`, `describe`
 * with the Events of the object, `explain`, `rollout status` timing out cleanly while nothing makes
 * the Deployment available, `get apiservices`, and the server's refusals as kubectl prints them.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { serve, type Served } from '../../src/server.js';
import { startEtcd, type EtcdCluster } from '../../testing/src/etcd-cluster.js';
import { runKubectl, tempDir } from '../support/helpers.js';

const kubectlBin = '/usr/bin/kubectl';

const manifest = `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec: {containers: [{name: api, image: "example.com/api:1"}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {mode: fast}
`;

/** Column headers and the cells of each row of kubectl's table output. */
const table = (out: string): string[][] => out.trim().split('\n').map((l) => l.trim().split(/\s{2,}/));

describe.runIf(existsSync(kubectlBin)).each(['sqlite', 'etcd'] as const)('kubectl with the new kinds on %s', (backend) => {
  let dir: string;
  let etcd: EtcdCluster | undefined;
  let served: Served;
  const kubectl = (...args: string[]) =>
    runKubectl(kubectlBin, { PATH: process.env.PATH, HOME: dir, KUBECONFIG: served.kubeconfig, KUBECACHEDIR: join(dir, 'cache') }, args);

  beforeAll(async () => {
    dir = tempDir();
    if (backend === 'etcd') etcd = await startEtcd({ members: 1, dataRoot: '/dev/shm' });
    // No node: the pods the controllers make stay Pending, so nothing becomes available.
    served = await serve(resolveConfig({ port: 0, dataDir: join(dir, 'data'), storage: etcd ? etcd.url : `sqlite:${join(dir, 'data', 'state.db')}`, disableAgent: true }), () => {});
    writeFileSync(join(dir, 'app.yaml'), manifest);
    expect((await kubectl('create', 'namespace', 'shop')).code).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await served?.server.close();
    await etcd?.stop();
  });

  it('creates a Deployment, a ConfigMap, a Job and a CronJob, and lists them with their columns', async () => {
    for (const args of [
      ['create', 'deployment', 'web', '--image=nginx:1.25', '--replicas=3', '-n', 'shop'],
      ['create', 'configmap', 'c1', '--from-literal=a=b', '--from-literal=c=d', '-n', 'shop'],
      ['create', 'job', 'once', '--image=busybox', '-n', 'shop'],
      ['create', 'cronjob', 'tick', '--image=busybox', '--schedule=0 0 1 1 *', '-n', 'shop'],
    ]) {
      const r = await kubectl(...args);
      expect([r.code, r.stderr]).toEqual([0, '']);
    }
    expect((await kubectl('apply', '-f', join(dir, 'app.yaml'))).stdout).toBe('deployment.apps/api created\nconfigmap/settings created\n');
    const deploy = await kubectl('get', 'deployments', '-n', 'shop', '-o', 'wide');
    // UP-TO-DATE follows the deployment controller; nothing makes the pods available without a node.
    expect(table(deploy.stdout).map((r) => [r[0], r[1], r[3], r[5], r[6], r[7]])).toEqual([
      ['NAME', 'READY', 'AVAILABLE', 'CONTAINERS', 'IMAGES', 'SELECTOR'],
      ['api', '0/2', '0', 'api', 'example.com/api:1', 'app=api'],
      ['web', '0/3', '0', 'nginx', 'nginx:1.25', 'app=web'],
    ]);
    expect(table((await kubectl('get', 'cm', '-n', 'shop')).stdout).map((r) => r.slice(0, 2))).toEqual([['NAME', 'DATA'], ['c1', '2'], ['settings', '1']]);
    expect(table((await kubectl('get', 'cronjobs', '-n', 'shop')).stdout)[1]!.slice(0, 6)).toEqual(['tick', '0 0 1 1 *', '<none>', 'False', '0', '<none>']);
    const job = table((await kubectl('get', 'jobs', '-n', 'shop', '-o', 'wide')).stdout);
    expect(job[0]).toEqual(['NAME', 'STATUS', 'COMPLETIONS', 'DURATION', 'AGE', 'CONTAINERS', 'IMAGES', 'SELECTOR']);
    expect(job[1]!.slice(0, 3)).toEqual(['once', 'Running', '0/1']);
    expect(job[1]!.at(-1)).toMatch(/^batch\.kubernetes\.io\/controller-uid=[0-9a-f-]{36}$/);
  });

  it('lists the workload kinds in `get all`, once each, with what their controllers made', async () => {
    const names = async () => {
      const all = await kubectl('get', 'all', '-n', 'shop');
      expect([all.code, all.stderr]).toEqual([0, '']);
      return all.stdout.split('\n').map((l) => l.split(/\s+/)[0]!).filter((n) => n && n !== 'NAME');
    };
    let seen: string[] = [];
    for (const started = Date.now(); Date.now() - started < 15_000; await new Promise((r) => setTimeout(r, 200))) {
      seen = await names();
      if (seen.filter((n) => n.startsWith('pod/')).length === 6) break;
    }
    expect(seen.filter((n) => !/^(pod|replicaset\.apps)\//.test(n)).sort()).toEqual(['cronjob.batch/tick', 'deployment.apps/api', 'deployment.apps/web', 'job.batch/once']);
    expect(seen.filter((n) => n.startsWith('replicaset.apps/')).map((n) => n.replace(/-\w+$/, '')).sort()).toEqual(['replicaset.apps/api', 'replicaset.apps/web']);
    // Two of api, three of web, one of the Job.
    expect(seen.filter((n) => n.startsWith('pod/')).map((n) => n.split('-')[0]).sort()).toEqual(['pod/api', 'pod/api', 'pod/once', 'pod/web', 'pod/web', 'pod/web']);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('describes a Deployment with the Events recorded about it', async () => {
    const uid = (await kubectl('get', 'deployment', 'web', '-n', 'shop', '-o', 'jsonpath={.metadata.uid}')).stdout;
    const event = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'web.1', namespace: 'shop' }, type: 'Normal', reason: 'ScalingReplicaSet', message: 'Scaled up replica set web-7d9f to 3',
      involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop', uid }, source: { component: 'deployment-controller' },
      firstTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), lastTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), count: 1 };
    writeFileSync(join(dir, 'event.json'), JSON.stringify(event));
    expect((await kubectl('create', '-f', join(dir, 'event.json'))).code).toBe(0);
    const described = await kubectl('describe', 'deployment', 'web', '-n', 'shop');
    expect(described.code).toBe(0);
    expect(described.stdout).toMatch(/Selector:\s+app=web/);
    // The deployment controller's: three pods made, none available without a node to run them.
    expect(described.stdout).toMatch(/Replicas:\s+3 desired \| 3 updated \| 3 total \| 0 available \| 3 unavailable/);
    expect(described.stdout).toMatch(/StrategyType:\s+RollingUpdate/);
    expect(described.stdout).toMatch(/Available\s+False\s+MinimumReplicasUnavailable/);
    expect(described.stdout).toMatch(/NewReplicaSet:\s+web-\w+ \(3\/3 replicas created\)/);
    expect(described.stdout).toMatch(/Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-\w+ to 3\n/);
    expect(described.stdout).toMatch(/Normal\s+ScalingReplicaSet\s+\S+\s+deployment-controller\s+Scaled up replica set web-7d9f to 3/);
    const events = table((await kubectl('get', 'events', '-n', 'shop', '--field-selector', 'involvedObject.kind=Deployment,involvedObject.name=web')).stdout);
    expect(events[0]).toEqual(['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE']);
    expect(events.slice(1).map((e) => e.slice(1))).toContainEqual(['Normal', 'ScalingReplicaSet', 'deployment/web', 'Scaled up replica set web-7d9f to 3']);
  });

  it('explains the new kinds with Kubernetes\' descriptions', async () => {
    const deploy = await kubectl('explain', 'deployment.spec.strategy');
    expect(deploy.stdout).toContain('GROUP:      apps');
    expect(deploy.stdout).toContain('The deployment strategy to use to replace existing pods with new ones.');
    const cm = await kubectl('explain', 'configmap.immutable');
    expect(cm.stdout).toContain('Immutable, if set to true, ensures that data stored in the ConfigMap cannot');
    expect((await kubectl('explain', 'lease.spec.holderIdentity')).stdout).toContain('holderIdentity contains the identity of the holder of a current lease.');
    // A bare `ingress` is networking.k8s.io/v1's (extensions/v1beta1 is still served, for clients that name it).
    expect((await kubectl('create', 'ingress', 'shop', '--rule=shop.example.com/=web:80', '-n', 'shop')).stdout).toBe('ingress.networking.k8s.io/shop created\n');
    expect((await kubectl('get', 'ingress', 'shop', '-n', 'shop', '-o', 'jsonpath={.apiVersion} {.spec.rules[0].http.paths[0].backend.service.port.number}')).stdout).toBe('networking.k8s.io/v1 80');
    expect((await kubectl('explain', 'ingress.spec.rules.http.paths.pathType')).stdout).toMatch(/GROUP:\s+networking\.k8s\.io[\s\S]*FIELD: pathType <string>/);
  });

  it('times out `rollout status` cleanly while nothing makes the Deployment available', async () => {
    const r = await kubectl('rollout', 'status', 'deployment/web', '-n', 'shop', '--timeout=2s');
    expect(r.code).toBe(1);
    // The deployment controller made the pods; no node runs them, so none becomes available.
    expect(r.stdout).toContain('Waiting for deployment "web" rollout to finish: 0 of 3 updated replicas are available...');
    expect(r.stderr).toBe('error: timed out waiting for the condition\n');
  });

  it('scales a Deployment, lists APIServices, and prints the server\'s refusals', async () => {
    expect((await kubectl('scale', 'deployment', 'web', '--replicas=5', '-n', 'shop')).stdout).toBe('deployment.apps/web scaled\n');
    expect((await kubectl('get', 'deployment', 'web', '-n', 'shop', '-o', 'jsonpath={.spec.replicas}')).stdout).toBe('5');
    const services = table((await kubectl('get', 'apiservices')).stdout);
    expect(services[0]).toEqual(['NAME', 'SERVICE', 'AVAILABLE', 'AGE']);
    expect(services.find((r) => r[0] === 'v1.apps')?.slice(1, 3)).toEqual(['Local', 'True']);
    const badCron = await kubectl('create', 'cronjob', 'bad', '--image=busybox', '--schedule=* * *', '-n', 'shop');
    expect(badCron.code).toBe(1);
    expect(badCron.stderr).toBe('error: failed to create cronjob: CronJob.batch "bad" is invalid: spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]\n');
    expect((await kubectl('create', 'configmap', 'frozen', '--from-literal=a=1', '-n', 'shop')).code).toBe(0);
    expect((await kubectl('patch', 'configmap', 'frozen', '-n', 'shop', '-p', '{"immutable":true}')).code).toBe(0);
    const frozen = await kubectl('patch', 'configmap', 'frozen', '-n', 'shop', '-p', '{"data":{"a":"2"}}');
    expect(frozen.stderr).toContain('The ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
    expect((await kubectl('get', 'configmap', 'frozen', '-n', 'shop', '-o', 'jsonpath={.data.a}')).stdout).toBe('1');
  });
});
