import { describe, expect, it } from 'vitest';
import { MemoryStorage } from './storage/memory/memory.js';
import { copyStorage, MigrateConflictError } from './migrate.js';

const bytes = (o: unknown) => Buffer.from(JSON.stringify(o));
const apiService = (name: string, labels: Record<string, string>, status: unknown) =>
  bytes({ apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name, labels }, spec: { group: name.split('.').slice(1).join('.'), version: 'v1' }, status });

describe('copyStorage', () => {
  it('copies, skips identical keys, and keeps an APIService the target server registered for itself', async () => {
    const from = new MemoryStorage();
    const to = new MemoryStorage();
    await from.create('/registry/configmaps/a/x', bytes({ a: 1 }));
    const own = '/registry/apiservices.apiregistration.k8s.io/v1.example.dev';
    await from.create(own, apiService('v1.example.dev', { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' }, { at: 'source' }));
    await to.create(own, apiService('v1.example.dev', { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' }, { at: 'target' }));
    expect(await copyStorage(from, to)).toMatchObject({ copied: 1, skipped: 1 });
    expect(JSON.parse(Buffer.from((await to.get(own))!.value).toString()).status).toEqual({ at: 'target' });
    expect(await copyStorage(from, to)).toMatchObject({ copied: 0, skipped: 2 });
    // The gateway's address each server publishes about itself: the target's stands.
    const gateway = '/registry/configmaps/knative-serving/config-gateway';
    const published = (url: string) => bytes({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'config-gateway', labels: { 'app.kubernetes.io/managed-by': 'cluster-api' } }, data: { url } });
    await from.create(gateway, published('http://127.0.0.1:1111'));
    await to.create(gateway, published('http://127.0.0.1:2222'));
    expect(await copyStorage(from, to)).toMatchObject({ copied: 0, skipped: 3 });
  });

  it('stops at any other key that differs, an APIService a client made included', async () => {
    const from = new MemoryStorage();
    const to = new MemoryStorage();
    const theirs = '/registry/apiservices.apiregistration.k8s.io/v1.metrics.dev';
    await from.create(theirs, apiService('v1.metrics.dev', {}, { at: 'source' }));
    await to.create(theirs, apiService('v1.metrics.dev', {}, { at: 'target' }));
    await expect(copyStorage(from, to)).rejects.toBeInstanceOf(MigrateConflictError);
  });
});
