import { beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { MemoryStorage } from '../../storage/memory/memory.js';
import { createRegistry } from '../../registry/index.js';

const registry = createRegistry(new MemoryStorage());
const ctx = { namespace: 'lr' };
const pods = registry.find('', 'v1', 'pods')!;
const claims = registry.find('', 'v1', 'persistentvolumeclaims')!;
const ranges = registry.find('', 'v1', 'limitranges')!;

const pod = (name: string, resources: Record<string, unknown> = {}, init?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx', resources }], ...(init && { initContainers: [{ name: 'setup', image: 'busybox', resources: init }] }) },
});
const claim = (name: string, storage: unknown): KubeObject => ({
  apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
});
const refusal = async (p: Promise<unknown>) => {
  const err = (await p.then(() => undefined, (e: unknown) => e)) as { code?: number; message?: string } | undefined;
  return err && { code: err.code, message: err.message };
};

describe('LimitRanger', () => {
  beforeAll(async () => {
    await registry.find('', 'v1', 'namespaces')!.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lr' } });
    await registry.find('', 'v1', 'namespaces')!.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bare' } });
  });

  it('changes nothing in a namespace without LimitRanges', async () => {
    const { object } = await pods.create({ namespace: 'bare' }, pod('plain'));
    expect((object.spec as any).containers[0].resources).toEqual({});
    expect(object.metadata.annotations?.['kubernetes.io/limit-ranger']).toBeUndefined();
  });

  it('defaults a Container item (default from max, request from default) and fills in what containers lack, with the annotation', async () => {
    const { object: lr } = await ranges.create(ctx, {
      apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits' },
      spec: { limits: [{ type: 'Container', max: { memory: '1Gi', cpu: '2' }, defaultRequest: { cpu: '500m' }, maxLimitRequestRatio: { cpu: '4' } }] },
    });
    expect((lr.spec as any).limits[0]).toMatchObject({ default: { memory: '1Gi', cpu: '2' }, defaultRequest: { cpu: '500m', memory: '1Gi' } });
    const { object } = await pods.create(ctx, pod('empty', {}, {}));
    expect((object.spec as any).containers[0].resources).toEqual({ limits: { cpu: '2', memory: '1Gi' }, requests: { cpu: '500m', memory: '1Gi' } });
    expect((object.spec as any).initContainers[0].resources.requests).toEqual({ cpu: '500m', memory: '1Gi' });
    expect(object.metadata.annotations?.['kubernetes.io/limit-ranger']).toBe(
      'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app; cpu, memory request for init container setup; cpu, memory limit for init container setup');
    // What a container names is kept; a limit without a request requests the limit (pod defaulting, before admission).
    const { object: partial } = await pods.create(ctx, pod('partial', { limits: { memory: '512Mi', cpu: '200m' } }));
    expect((partial.spec as any).containers[0].resources).toEqual({ limits: { cpu: '200m', memory: '512Mi' }, requests: { cpu: '200m', memory: '512Mi' } });
    expect(partial.metadata.annotations?.['kubernetes.io/limit-ranger']).toBeUndefined();
  });

  it('refuses what is over max or over the ratio, with kube-apiserver\'s messages, and stores nothing', async () => {
    expect(await refusal(pods.create(ctx, pod('big', { limits: { memory: '2Gi' } })))).toEqual({ code: 403, message: 'pods "big" is forbidden: maximum memory usage per Container is 1Gi, but limit is 2Gi' });
    expect(await refusal(pods.create(ctx, pod('ratio', { requests: { cpu: '250m' }, limits: { cpu: '2' } })))).toEqual({
      code: 403, message: 'pods "ratio" is forbidden: cpu max limit to request ratio per Container is 4, but provided ratio is 8.000000' });
    expect(await refusal(pods.create(ctx, pod('both', { requests: { cpu: '250m', memory: '2Gi' }, limits: { cpu: '3', memory: '2Gi' } })))).toEqual({
      code: 403,
      message: 'pods "both" is forbidden: [maximum cpu usage per Container is 2, but limit is 3, maximum memory usage per Container is 1Gi, but limit is 2Gi, cpu max limit to request ratio per Container is 4, but provided ratio is 12.000000]',
    });
    await expect(pods.get(ctx, 'big')).rejects.toMatchObject({ code: 404 });
    // A dry run is refused the same way.
    expect((await refusal(pods.create({ ...ctx, dryRun: true }, pod('dry', { limits: { memory: '2Gi' } }))))?.code).toBe(403);
  });

  it('holds Pod items against the pod\'s totals and claims against their request', async () => {
    await ranges.create({ namespace: 'bare' }, {
      apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'per-pod' },
      spec: { limits: [{ type: 'Pod', min: { cpu: '500m' } }, { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } }] },
    });
    expect(await refusal(pods.create({ namespace: 'bare' }, pod('small', { requests: { cpu: '100m' } })))).toEqual({ code: 403, message: 'pods "small" is forbidden: minimum cpu usage per Pod is 500m, but request is 100m' });
    expect(await refusal(pods.create({ namespace: 'bare' }, pod('none')))).toEqual({ code: 403, message: 'pods "none" is forbidden: minimum cpu usage per Pod is 500m.  No request is specified' });
    expect((await pods.create({ namespace: 'bare' }, pod('enough', { requests: { cpu: '500m' } }))).object.metadata.name).toBe('enough');
    expect(await refusal(claims.create({ namespace: 'bare' }, claim('huge', '20Gi')))).toEqual({ code: 403, message: 'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi' });
    expect(await refusal(claims.create({ namespace: 'bare' }, claim('tiny', '512Mi')))).toEqual({ code: 403, message: 'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 512Mi' });
    await claims.create({ namespace: 'bare' }, claim('fine', '2Gi'));
    // A claim grown over max on update is refused too.
    expect((await refusal(claims.patch({ namespace: 'bare' }, 'fine', 'merge', { spec: { resources: { requests: { storage: '11Gi' } } } })))?.code).toBe(403);
  });

  it('answers malformed quantities with 422, never 500', async () => {
    for (const bad of ['1.2.3', 'lots', '1Qi']) {
      expect((await refusal(pods.create(ctx, pod(`bad-${bad.length}`, { limits: { memory: bad } }))))?.code).toBe(422);
      expect((await refusal(ranges.create(ctx, { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'bad' }, spec: { limits: [{ type: 'Container', max: { cpu: bad } }] } })))?.code).toBe(422);
    }
    expect((await refusal(claims.create({ namespace: 'bare' }, claim('junk', { no: 'quantity' }))))?.code).toBe(422);
  });
});
