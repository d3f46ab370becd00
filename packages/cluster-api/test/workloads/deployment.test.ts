/**
 * The deployment and ReplicaSet controllers over HTTP, on a real SQLite file and a real etcd, with
 * pods driven through their status as a node agent (or kwok) would: a Deployment makes a ReplicaSet
 * and its pods and stays unavailable while they are Pending; a rolling update keeps within maxSurge
 * and maxUnavailable; Recreate empties the old revision first; resizes, pauses, progress deadlines,
 * revision history and rollbacks (and the malformed rollback) behave and are recorded as
 * kube-controller-manager records them; deleting cascades.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {conditionOf, deployment, eventsOf, freshNamespace, livePods, merge, readyAll, startWorkloadServer, type Call} from '../support/workload-helpers.js';
import { until } from '../../testing/src/poll.js';

const apps = (ns: string, plural: string, name = '') => `/apis/apps/v1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;

describe.each(['sqlite', 'etcd'] as const)('deployments on %s', (backend) => {
  let call: Call;
  let close: () => Promise<void>;
  beforeAll(async () => ({ call, close } = await startWorkloadServer(backend)), 60_000);
  afterAll(async () => close?.());

  const get = async (ns: string, name: string) => (await call('GET', apps(ns, 'deployments', name))).json;
  const sets = async (ns: string) => (await call('GET', apps(ns, 'replicasets'))).json.items as any[];
  /** Marks pods ready until the Deployment reports `done`. */
  const driveUntil = async (ns: string, name: string, done: (d: any) => boolean, what: string) =>
    until(what, async () => {
      await readyAll(call, ns, `app=${name}`);
      const d = await get(ns, name);
      return done(d) && d;
    }, { timeoutMs: 20_000 });
  const complete = (replicas: number) => (d: any) =>
    d.status?.observedGeneration >= d.metadata.generation && d.status?.updatedReplicas === replicas && d.status?.availableReplicas === replicas && d.status?.replicas === replicas;

  it('makes a ReplicaSet and its pods, unavailable while Pending, available once Ready, with the events kubectl describe shows', async () => {
    const ns = await freshNamespace(call, 'dep');
    expect((await call('POST', apps(ns, 'deployments'), { body: deployment('web', 3) })).status).toBe(201);
    const pending = await until('the status of a pending rollout', async () => {
      const d = await get(ns, 'web');
      return d.status?.replicas === 3 && conditionOf(d, 'Available') && d;
    }, { timeoutMs: 15_000 });
    expect(pending.status).toMatchObject({ observedGeneration: 1, replicas: 3, updatedReplicas: 3, unavailableReplicas: 3 });
    expect(pending.status.availableReplicas).toBeUndefined();
    expect(conditionOf(pending, 'Available')).toMatchObject({ status: 'False', reason: 'MinimumReplicasUnavailable', message: 'Deployment does not have minimum availability.' });
    expect(conditionOf(pending, 'Progressing')).toMatchObject({ status: 'True' });
    expect(pending.metadata.annotations['deployment.kubernetes.io/revision']).toBe('1');
    const [rs] = await sets(ns);
    const hash = rs.metadata.labels['pod-template-hash'];
    expect(rs.metadata.name).toBe(`web-${hash}`);
    expect(rs.spec.selector.matchLabels).toEqual({ app: 'web', 'pod-template-hash': hash });
    expect(rs.metadata.annotations).toMatchObject({ 'deployment.kubernetes.io/revision': '1', 'deployment.kubernetes.io/desired-replicas': '3', 'deployment.kubernetes.io/max-replicas': '4' });
    expect(rs.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: pending.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    const pods = await livePods(call, ns, 'app=web');
    expect(pods.map((p) => [p.metadata.name.startsWith(`web-${hash}-`), p.status.phase, p.metadata.ownerReferences[0].name])).toEqual(Array(3).fill([true, 'Pending', rs.metadata.name]));

    const done = await driveUntil(ns, 'web', complete(3), 'the rollout to complete');
    expect(conditionOf(done, 'Available')).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable' });
    await until('NewReplicaSetAvailable', async () => conditionOf(await get(ns, 'web'), 'Progressing')?.reason === 'NewReplicaSetAvailable', { timeoutMs: 15_000 });
    expect(conditionOf(await get(ns, 'web'), 'Progressing').message).toBe(`ReplicaSet "web-${hash}" has successfully progressed.`);
    await until('the ScalingReplicaSet event', async () => (await eventsOf(call, ns, 'Deployment', 'web')).includes(`ScalingReplicaSet: Scaled up replica set web-${hash} to 3`), { timeoutMs: 15_000 });
    const created = await until('three SuccessfulCreate events', async () => {
      const e = await eventsOf(call, ns, 'ReplicaSet', rs.metadata.name);
      return e.length === 3 && e;
    }, { timeoutMs: 15_000 });
    expect(created.sort()).toEqual(pods.map((p) => `SuccessfulCreate: Created pod: ${p.metadata.name}`).sort());
  });

  it('rolls out a new template within maxSurge and maxUnavailable, keeping the old revision scaled to zero', async () => {
    const ns = await freshNamespace(call, 'roll');
    const strategy = { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } };
    await call('POST', apps(ns, 'deployments'), { body: deployment('web', 4, 'nginx:1', strategy) });
    await driveUntil(ns, 'web', complete(4), 'the first rollout');
    let peakSize = 0;
    let minReady = Infinity;
    await merge(call, apps(ns, 'deployments', 'web'), { spec: { template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } } });
    const done = await until('the second rollout', async () => {
      const all = await sets(ns);
      peakSize = Math.max(peakSize, all.reduce((n, rs) => n + rs.spec.replicas, 0));
      const ready = (await livePods(call, ns, 'app=web')).filter((p) => (p.status.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'));
      minReady = Math.min(minReady, ready.length);
      // One pod at a time, so every step of the rollout is seen.
      const next = (await livePods(call, ns, 'app=web')).find((p) => p.spec.containers[0].image === 'nginx:2' && !(p.status.conditions ?? []).length);
      if (next) await call('PATCH', `/api/v1/namespaces/${ns}/pods/${next.metadata.name}/status`, { body: { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().slice(0, 19) + 'Z' }] } }, headers: { 'content-type': 'application/merge-patch+json' } });
      const d = await get(ns, 'web');
      return complete(4)(d) && d.metadata.annotations['deployment.kubernetes.io/revision'] === '2' && d;
    }, { timeoutMs: 30_000 });
    expect(peakSize).toBeLessThanOrEqual(5);
    expect(minReady).toBeGreaterThanOrEqual(3);
    const all = await sets(ns);
    const byRevision = Object.fromEntries(all.map((rs) => [rs.metadata.annotations['deployment.kubernetes.io/revision'], rs.spec.replicas]));
    expect(byRevision).toEqual({ 1: 0, 2: 4 });
    expect(done.status.unavailableReplicas).toBeUndefined();
    const events = await eventsOf(call, ns, 'Deployment', 'web');
    expect(events.some((e) => /^ScalingReplicaSet: Scaled down replica set web-\w+ to \d from \d$/.test(e))).toBe(true);
    expect(events.some((e) => /^ScalingReplicaSet: Scaled up replica set web-\w+ to \d from \d$/.test(e))).toBe(true);
  });

  it('recreates: the old revision goes to zero and its pods away before the new one starts', async () => {
    const ns = await freshNamespace(call, 'rec');
    await call('POST', apps(ns, 'deployments'), { body: deployment('db', 2, 'postgres:15', { strategy: { type: 'Recreate' } }) });
    await driveUntil(ns, 'db', complete(2), 'the first rollout');
    await merge(call, apps(ns, 'deployments', 'db'), { spec: { template: { spec: { containers: [{ name: 'app', image: 'postgres:16' }] } } } });
    await driveUntil(ns, 'db', (d) => complete(2)(d) && d.metadata.annotations['deployment.kubernetes.io/revision'] === '2', 'the recreate rollout');
    const events = await eventsOf(call, ns, 'Deployment', 'db');
    const down = events.findIndex((e) => /Scaled down replica set db-\w+ to 0 from 2/.test(e));
    const up = events.findIndex((e, i) => i > 0 && /Scaled up replica set db-\w+ to 2$/.test(e));
    expect(down).toBeGreaterThan(0);
    expect(up).toBeGreaterThan(down);
    expect((await livePods(call, ns, 'app=db')).map((p) => p.spec.containers[0].image)).toEqual(['postgres:16', 'postgres:16']);
  });

  it('scales through /scale, pauses and resumes, and records the paused condition', async () => {
    const ns = await freshNamespace(call, 'scale');
    await call('POST', apps(ns, 'deployments'), { body: deployment('web', 2) });
    await driveUntil(ns, 'web', complete(2), 'the rollout');
    await merge(call, `${apps(ns, 'deployments', 'web')}/scale`, { spec: { replicas: 5 } });
    await driveUntil(ns, 'web', complete(5), 'five replicas');
    await merge(call, `${apps(ns, 'deployments', 'web')}/scale`, { spec: { replicas: 1 } });
    await until('one replica', async () => (await livePods(call, ns, 'app=web')).length === 1 && complete(1)(await get(ns, 'web')), { timeoutMs: 15_000 });
    await merge(call, apps(ns, 'deployments', 'web'), { spec: { paused: true, template: { spec: { containers: [{ name: 'app', image: 'nginx:2' }] } } } });
    const paused = await until('the paused condition', async () => {
      const d = await get(ns, 'web');
      return conditionOf(d, 'Progressing')?.reason === 'DeploymentPaused' && d;
    }, { timeoutMs: 15_000 });
    expect(conditionOf(paused, 'Progressing')).toMatchObject({ status: 'Unknown', message: 'Deployment is paused' });
    expect(await sets(ns)).toHaveLength(1);
    await merge(call, apps(ns, 'deployments', 'web'), { spec: { paused: null } });
    await driveUntil(ns, 'web', (d) => complete(1)(d) && d.metadata.annotations['deployment.kubernetes.io/revision'] === '2', 'the resumed rollout');
    expect(await sets(ns)).toHaveLength(2);
  });

  it('reports ProgressDeadlineExceeded when pods never become ready', async () => {
    const ns = await freshNamespace(call, 'stuck');
    await call('POST', apps(ns, 'deployments'), { body: deployment('web', 1, 'nginx', { progressDeadlineSeconds: 1 }) });
    const stuck = await until('the progress deadline', async () => {
      const d = await get(ns, 'web');
      return conditionOf(d, 'Progressing')?.status === 'False' && d;
    }, { timeoutMs: 10_000 });
    const rsName = (await sets(ns))[0].metadata.name;
    expect(conditionOf(stuck, 'Progressing')).toMatchObject({ reason: 'ProgressDeadlineExceeded', message: `ReplicaSet "${rsName}" has timed out progressing.` });
  });

  it('keeps revisionHistoryLimit old ReplicaSets, and rolls back to a revision (a missing one is refused with a cause)', async () => {
    const ns = await freshNamespace(call, 'hist');
    await call('POST', apps(ns, 'deployments'), { body: deployment('web', 1, 'nginx:1', { revisionHistoryLimit: 1 }) });
    for (const image of ['nginx:2', 'nginx:3']) {
      await driveUntil(ns, 'web', complete(1), `the rollout before ${image}`);
      await merge(call, apps(ns, 'deployments', 'web'), { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } });
    }
    await driveUntil(ns, 'web', (d) => complete(1)(d) && d.metadata.annotations['deployment.kubernetes.io/revision'] === '3', 'revision 3');
    const kept = await until('the history trimmed to one old ReplicaSet', async () => {
      const all = await sets(ns);
      return all.length === 2 && all;
    }, { timeoutMs: 15_000 });
    expect(kept.map((rs: any) => rs.metadata.annotations['deployment.kubernetes.io/revision']).sort()).toEqual(['2', '3']);

    const rollback = (revision: number) => call('POST', `/apis/apps/v1beta1/namespaces/${ns}/deployments/web/rollback`, {
      body: { apiVersion: 'apps/v1beta1', kind: 'DeploymentRollback', name: 'web', rollbackTo: { revision } },
    });
    const missing = await rollback(1);
    expect([missing.status, missing.json.reason, missing.json.details.causes]).toEqual([422, 'Invalid', [{ reason: 'FieldValueNotFound', message: 'Not found: 1', field: 'rollbackTo.revision' }]]);
    const negative = await rollback(-1);
    expect([negative.status, negative.json.details.causes[0].field]).toEqual([422, 'rollbackTo.revision']);
    const ok = await rollback(2);
    expect([ok.status, ok.json.status, ok.json.message]).toEqual([200, 'Success', 'rollback request for deployment "web" succeeded']);
    const back = await driveUntil(ns, 'web', (d) => complete(1)(d) && d.metadata.annotations['deployment.kubernetes.io/revision'] === '4', 'the rollback');
    expect(back.spec.template.spec.containers[0].image).toBe('nginx:2');
    expect(back.metadata.annotations['deprecated.deployment.rollback.to']).toBeUndefined();
    const revived = (await sets(ns)).find((rs) => rs.metadata.annotations['deployment.kubernetes.io/revision'] === '4');
    expect(revived.metadata.annotations['deployment.kubernetes.io/revision-history']).toBe('2');
    await until('the rollback event', async () => (await eventsOf(call, ns, 'Deployment', 'web')).includes('DeploymentRollback: Rolled back deployment "web" to revision 2'), { timeoutMs: 15_000 });
    // spec.rollbackTo through apps/v1beta1 to a revision that is gone: a Warning, and the request cleared.
    await merge(call, `/apis/apps/v1beta1/namespaces/${ns}/deployments/web`, { spec: { rollbackTo: { revision: 9 } } });
    await until('the not-found warning', async () => (await eventsOf(call, ns, 'Deployment', 'web')).includes('DeploymentRollbackRevisionNotFound: Unable to find the revision to rollback to.'), { timeoutMs: 15_000 });
    await until('the request cleared', async () => (await get(ns, 'web')).metadata.annotations['deprecated.deployment.rollback.to'] === undefined, { timeoutMs: 15_000 });
  });

  it('deletes its ReplicaSets and pods with it, or orphans them when asked', async () => {
    const ns = await freshNamespace(call, 'gc');
    for (const name of ['a', 'b']) await call('POST', apps(ns, 'deployments'), { body: deployment(name, 2) });
    await until('four pods', async () => (await livePods(call, ns)).length === 4, { timeoutMs: 15_000 });
    expect((await call('DELETE', apps(ns, 'deployments', 'a'))).status).toBe(200);
    await until('a, its ReplicaSet and pods gone', async () => (await livePods(call, ns, 'app=a')).length === 0 && (await sets(ns)).length === 1, { timeoutMs: 15_000 });
    const orphaned = await call('DELETE', apps(ns, 'deployments', 'b'), { body: { propagationPolicy: 'Orphan' } });
    expect(orphaned.status).toBe(200);
    await until('b gone', async () => (await call('GET', apps(ns, 'deployments', 'b'))).status === 404, { timeoutMs: 15_000 });
    const left = await until('the orphaned ReplicaSet', async () => {
      const all = await sets(ns);
      return all.length === 1 && !all[0].metadata.ownerReferences && all;
    }, { timeoutMs: 15_000 });
    expect(left[0].metadata.labels.app).toBe('b');
    expect((await livePods(call, ns, 'app=b')).length).toBe(2);
  });
});
