/**
 * `/apis` with remote APIServices merged, as kube-aggregator builds it: a remote group placed by its
 * highest groupPriorityMinimum, its versions by versionPriority (then Kubernetes' version order), a
 * remote version of a local group added after the local ones.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/meta.js';
import { mergedGroupList } from '../../src/aggregation/discovery.js';
import { Discovery } from '../../src/http/discovery.js';
import { allKinds } from '../../src/registry/kinds/index.js';

const remote = (group: string, version: string, groupPriorityMinimum: number, versionPriority: number): KubeObject => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: `${version}.${group}` },
  spec: { group, version, groupPriorityMinimum, versionPriority, service: { namespace: 'x', name: 'y', port: 443 } },
});

describe('merged discovery', () => {
  const local = new Discovery(allKinds).groupList();

  it('places remote groups by priority and orders their versions', () => {
    const merged = mergedGroupList(local, [
      remote('metrics.k8s.io', 'v1', 100, 50),
      remote('metrics.k8s.io', 'v1beta1', 100, 100),
      remote('first.example.com', 'v1', 20000, 1),
      remote('equal.example.com', 'v2', 5, 10),
      remote('equal.example.com', 'v10', 5, 10),
    ]);
    const names = merged.groups.map((g) => g.name);
    expect(names[0]).toBe('first.example.com');
    expect(names.indexOf('metrics.k8s.io')).toBeGreaterThan(names.indexOf('apps'));
    expect(names.slice(-2)).toEqual(['equal.example.com', 'extensions']);
    const metrics = merged.groups.find((g) => g.name === 'metrics.k8s.io')!;
    expect(metrics.versions.map((v) => v.version)).toEqual(['v1beta1', 'v1']);
    expect(metrics.preferredVersion).toEqual({ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' });
    expect(merged.groups.find((g) => g.name === 'equal.example.com')!.versions.map((v) => v.version)).toEqual(['v10', 'v2']);
  });

  it('adds a remote version to a local group, keeping the local preferred one', () => {
    const apps = mergedGroupList(local, [remote('apps', 'v2', 17800, 1)]).groups.find((g) => g.name === 'apps')!;
    expect(apps.versions.map((v) => v.version)).toEqual(['v1', 'v1beta1', 'v2']);
    expect(apps.preferredVersion.version).toBe('v1');
  });

  it('is the local list when nothing is remote', () => {
    expect(mergedGroupList(local, [])).toEqual(local);
  });
});
