import { describe, expect, it } from 'vitest';
import { resourcePath, Resources, resourceType } from './resources.js';

describe('resourcePath', () => {
  it.each([
    [Resources.pods, { namespace: 'a', name: 'p', subresource: 'status' }, '/api/v1/namespaces/a/pods/p/status'],
    [Resources.namespaces, { namespace: 'ignored', name: 'a' }, '/api/v1/namespaces/a'],
    [Resources.leases, { namespace: 'kube-system' }, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases'],
    [resourceType('example.com/v1alpha1', 'Widget', 'widgets'), {}, '/apis/example.com/v1alpha1/widgets'],
    [Resources.pods, { name: 'a:b' }, '/api/v1/pods/a%3Ab'],
  ])('%j %j → %s', (type, parts, path) => {
    expect(resourcePath(type, parts)).toBe(path);
  });

  it.each(['', '.', '..', 'a/b', '../../secrets'])('refuses the name %j', (name) => {
    expect(() => resourcePath(Resources.pods, { namespace: 'a', name })).toThrow(/Invalid name/);
  });
});
