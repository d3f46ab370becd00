import { describe, expect, it } from 'vitest';
import type { DeleteOptions, KubeObject } from '../../api/meta.js';
import { checkDeleteOptions, gcFinalizers, planDelete, releasedByUpdate } from './deletion.js';
import { namespace } from '../kinds/namespace.js';
import { pod } from '../kinds/pod.js';
import { replicationController } from '../kinds/replication-controller.js';
import { secret } from '../kinds/secret.js';

const obj = (meta: Partial<KubeObject['metadata']> = {}, rest: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1', kind: 'X', metadata: { name: 'x', uid: 'u', generation: 1, ...meta }, ...rest,
});
const now = new Date('2026-01-01T00:00:00Z');

describe('gcFinalizers (deletionFinalizersForGarbageCollection)', () => {
  const cases: [string, string[], DeleteOptions, string[]][] = [
    ['orphanDependents true adds orphan', [], { orphanDependents: true }, ['orphan']],
    ['orphanDependents false removes orphan', ['a/b', 'orphan'], { orphanDependents: false }, ['a/b']],
    ['Foreground adds foregroundDeletion, drops orphan', ['orphan'], { propagationPolicy: 'Foreground' }, ['foregroundDeletion']],
    ['Background drops both', ['orphan', 'foregroundDeletion', 'a/b'], { propagationPolicy: 'Background' }, ['a/b']],
    ['no option: an existing orphan stays', ['orphan'], {}, ['orphan']],
    ['no option: an existing foregroundDeletion stays', ['foregroundDeletion'], {}, ['foregroundDeletion']],
    ['no option, no finalizer: Background by default', [], {}, []],
  ];
  it.each(cases)('%s', (_name, finalizers, options, want) => {
    expect(gcFinalizers(secret, obj({ finalizers }), options)).toEqual(want);
  });

  it('takes the kind default when nothing else says (v1 ReplicationController: Orphan)', () => {
    expect(gcFinalizers(replicationController, obj(), {})).toEqual(['orphan']);
    expect(gcFinalizers(replicationController, obj(), { propagationPolicy: 'Background' })).toEqual([]);
  });
});

describe('planDelete', () => {
  const podObj = (grace?: number, phase = 'Pending', nodeName = 'node-1') =>
    obj({}, { spec: { terminationGracePeriodSeconds: grace, nodeName }, status: { phase } });

  it('removes at once what nothing holds', () => {
    expect(planDelete(secret, obj(), {}, now)).toEqual({ action: 'remove' });
    expect(planDelete(pod, podObj(0), {}, now)).toEqual({ action: 'remove' });
    expect(planDelete(pod, podObj(30, 'Succeeded'), {}, now)).toEqual({ action: 'remove' });
    // As Kubernetes: a pod no node runs has nothing to stop, whatever period it or the request names.
    expect(planDelete(pod, podObj(30, 'Pending', ''), {}, now)).toEqual({ action: 'remove' });
    expect(planDelete(pod, podObj(30, 'Pending', ''), { gracePeriodSeconds: 10 }, now)).toEqual({ action: 'remove' });
  });

  it('marks a pod with its grace period, and only a shorter period changes a running one', () => {
    const plan = planDelete(pod, podObj(30), {}, now);
    expect(plan.action).toBe('mark');
    const marked = (plan as { next: KubeObject }).next;
    expect(marked.metadata).toMatchObject({ deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30, generation: 2 });
    expect(planDelete(pod, marked, {}, now)).toEqual({ action: 'pending' });
    expect(planDelete(pod, marked, { gracePeriodSeconds: 60 }, now)).toEqual({ action: 'pending' });
    const shorter = planDelete(pod, marked, { gracePeriodSeconds: 10 }, now) as { next: KubeObject };
    expect(shorter.next.metadata).toMatchObject({ deletionTimestamp: '2026-01-01T00:00:10Z', deletionGracePeriodSeconds: 10 });
    expect(planDelete(pod, marked, { gracePeriodSeconds: 0 }, now)).toEqual({ action: 'remove' });
    expect(planDelete(pod, podObj(30), { gracePeriodSeconds: 5 }, now)).toMatchObject({ next: { metadata: { deletionGracePeriodSeconds: 5 } } });
  });

  it('marks an object held by finalizers with a zero grace period; a namespace turns Terminating', () => {
    const held = planDelete(secret, obj({ finalizers: ['a/b'] }), {}, now) as { next: KubeObject };
    expect(held.next.metadata).toMatchObject({ deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0, finalizers: ['a/b'] });
    const orphaning = planDelete(secret, obj(), { propagationPolicy: 'Orphan' }, now) as { next: KubeObject };
    expect(orphaning.next.metadata.finalizers).toEqual(['orphan']);
    const ns = planDelete(namespace, obj({}, { spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } }), {}, now) as { next: KubeObject };
    expect([ns.next.status, Boolean(ns.next.metadata.deletionTimestamp)]).toEqual([{ phase: 'Terminating' }, true]);
  });

  it('releases on update only when the last holder went and no grace period is running', () => {
    const marked = obj({ deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0, finalizers: ['a/b'] });
    expect(releasedByUpdate(secret, { ...marked, metadata: { ...marked.metadata, finalizers: [] } }, marked)).toBe(true);
    expect(releasedByUpdate(secret, marked, marked)).toBe(false);
    const graceful = obj({ deletionTimestamp: '2030-01-01T00:00:00Z', deletionGracePeriodSeconds: 30 });
    expect(releasedByUpdate(pod, graceful, graceful)).toBe(false);
    const ns = obj({ deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 }, { spec: { finalizers: ['kubernetes'] } });
    expect(releasedByUpdate(namespace, { ...ns, spec: { finalizers: [] } }, ns)).toBe(true);
  });
});

describe('checkDeleteOptions', () => {
  it('refuses both orphanDependents and propagationPolicy, a negative grace and an unknown policy with 422', () => {
    for (const bad of [{ orphanDependents: true, propagationPolicy: 'Orphan' }, { gracePeriodSeconds: -1 }, { propagationPolicy: 'Sideways' }, { gracePeriodSeconds: 1.5 }]) {
      expect(() => checkDeleteOptions(bad as DeleteOptions)).toThrow(expect.objectContaining({ code: 422 }));
    }
    expect(() => checkDeleteOptions({ gracePeriodSeconds: 0, propagationPolicy: 'Foreground' })).not.toThrow();
  });
});
