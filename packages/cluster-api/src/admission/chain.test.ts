import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.js';
import { ApiError, forbidden } from '../api/errors.js';
import { MemoryStorage } from '../storage/memory/memory.js';
import { createRegistry } from '../registry/index.js';
import { warn, type AdmissionPlugin, type AdmissionRequest } from './index.js';

const configMap = (name: string, data: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });

/** A plugin in a few lines: defaults a key, refuses a name, warns. */
const seen: string[] = [];
const labelDefaulter: AdmissionPlugin = {
  name: 'Defaulter',
  handles: (req) => req.resource === 'configmaps',
  mutate(req) {
    seen.push(`mutate ${req.operation} ${req.name}`);
    const data = (req.object as { data?: Record<string, string> }).data ??= {};
    if (data.colour) return false;
    data.colour = 'blue';
    return true;
  },
};
const refuser: AdmissionPlugin = {
  name: 'Refuser',
  handles: (req) => req.resource === 'configmaps',
  validate(req: AdmissionRequest) {
    seen.push(`validate ${req.operation} ${req.name}`);
    if ((req.object as { data?: Record<string, string> }).data?.colour === 'red') throw forbidden({ group: '', resource: 'configmaps' }, req.name, 'red is refused');
    if (req.name === 'loud') warn(req.ctx, 'loud is loud');
  },
};

describe('admission chain', () => {
  const registry = createRegistry(new MemoryStorage(), { admissionPlugins: [labelDefaulter, refuser] });
  const namespaces = registry.find('', 'v1', 'namespaces')!;
  const store = registry.find('', 'v1', 'configmaps')!;

  it('runs mutating steps before validating ones, on creates and updates, and stores what they changed', async () => {
    await namespaces.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    seen.length = 0;
    const { object } = await store.create({ namespace: 'default' }, configMap('a'));
    expect((object.data as Record<string, string>).colour).toBe('blue');
    expect(seen).toEqual(['mutate CREATE a', 'validate CREATE a']);
    const stored = await store.get({ namespace: 'default' }, 'a');
    expect((stored.data as Record<string, string>).colour).toBe('blue');
    seen.length = 0;
    await store.patch({ namespace: 'default' }, 'a', 'merge', { data: { colour: 'green' } });
    expect(seen).toEqual(['mutate UPDATE a', 'validate UPDATE a']);
  });

  it('refuses with the plugin\'s Status and stores nothing', async () => {
    const err = await store.create({ namespace: 'default' }, configMap('b', { colour: 'red' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe(403);
    expect((err as ApiError).message).toContain('red is refused');
    await expect(store.get({ namespace: 'default' }, 'b')).rejects.toMatchObject({ code: 404 });
    await expect(store.patch({ namespace: 'default' }, 'a', 'merge', { data: { colour: 'red' } })).rejects.toMatchObject({ code: 403 });
  });

  it('collects warnings on the request context', async () => {
    const ctx = { namespace: 'default' } as { namespace: string; warnings?: string[] };
    await store.create(ctx, configMap('loud'));
    expect(ctx.warnings).toEqual(['loud is loud']);
  });

  it('validates again what a mutating step made invalid', async () => {
    const breaker: AdmissionPlugin = { name: 'Breaker', handles: (req) => req.resource === 'configmaps', mutate: (req) => ((req.object.metadata.labels = { 'bad label!': 'x' }), true) };
    const other = createRegistry(new MemoryStorage(), { admissionPlugins: [breaker] });
    await other.find('', 'v1', 'namespaces')!.create({}, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
    await expect(other.find('', 'v1', 'configmaps')!.create({ namespace: 'default' }, configMap('c'))).rejects.toMatchObject({ code: 422 });
  });
});
