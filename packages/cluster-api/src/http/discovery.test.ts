import { describe, expect, it } from 'vitest';
import type { ResourceDefinition } from '../registry/definition.js';
import { finalize } from '../registry/subresources/finalize.js';
import { statusSubresource } from '../registry/subresources/status.js';
import { compareVersions, Discovery } from './discovery.js';

const def = (group: string, version: string, plural: string, extra: Partial<ResourceDefinition> = {}): ResourceDefinition => ({
  group, version, plural, kind: plural, listKind: `${plural}List`, singular: plural.slice(0, -1), namespaced: true,
  verbs: ['get', 'list'], strategy: {}, ...extra,
});

describe('Discovery', () => {
  const d = new Discovery([
    def('', 'v1', 'pods', { shortNames: ['po'], categories: ['all'], subresources: { status: statusSubresource() } }),
    def('', 'v1', 'namespaces', { namespaced: false, subresources: { status: statusSubresource(), finalize } }),
    def('batch', 'v2alpha1', 'cronjobs'),
    def('batch', 'v1', 'jobs'),
  ]);

  it('lists core resources with subresources', () => {
    expect(d.resourceList('', 'v1')).toEqual({
      kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'v1',
      resources: [
        { name: 'pods', singularName: 'pod', namespaced: true, kind: 'pods', verbs: ['get', 'list'], shortNames: ['po'], categories: ['all'] },
        { name: 'pods/status', singularName: '', namespaced: true, kind: 'pods', verbs: ['get', 'patch', 'update'] },
        { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'namespaces', verbs: ['get', 'list'] },
        { name: 'namespaces/status', singularName: '', namespaced: false, kind: 'namespaces', verbs: ['get', 'patch', 'update'] },
        { name: 'namespaces/finalize', singularName: '', namespaced: false, kind: 'namespaces', verbs: ['update'] },
      ],
    });
  });

  it('prefers the most stable version of a group', () => {
    expect(d.group('batch')).toEqual({
      kind: 'APIGroup', apiVersion: 'v1', name: 'batch',
      versions: [{ groupVersion: 'batch/v1', version: 'v1' }, { groupVersion: 'batch/v2alpha1', version: 'v2alpha1' }],
      preferredVersion: { groupVersion: 'batch/v1', version: 'v1' },
    });
    expect(d.groupList()).toMatchObject({ kind: 'APIGroupList', groups: [{ name: 'batch' }] });
    expect(d.resourceList('batch', 'v2alpha1')).toMatchObject({ groupVersion: 'batch/v2alpha1', resources: [{ name: 'cronjobs' }] });
    expect(d.resourceList('batch', 'v3')).toBeUndefined();
    expect(d.group('nope')).toBeUndefined();
  });

  it('orders versions as Kubernetes does', () => {
    expect(['v1beta1', 'v2alpha1', 'v1', 'v2', 'v1beta2', 'v1alpha1'].sort(compareVersions)).toEqual(['v2', 'v1', 'v1beta2', 'v1beta1', 'v2alpha1', 'v1alpha1']);
  });
});
