import { describe, expect, it } from 'vitest';
import { isStorageError } from './errors.js';
import { checkKey, checkPrefix, namespacePrefix, objectKey, parseKey, prefixEnd, resourcePrefix, type ParsedKey } from './keys.js';

const invalid = (fn: () => unknown): boolean => {
  try {
    fn();
    return false;
  } catch (err) {
    return isStorageError(err, 'InvalidArgument');
  }
};

describe('keys', () => {
  it('builds namespaced and cluster-scoped keys and their prefixes', () => {
    expect(objectKey('pods', 'default', 'web-1')).toBe('/registry/pods/default/web-1');
    expect(objectKey('namespaces', undefined, 'default')).toBe('/registry/namespaces/default');
    expect(objectKey('namespaces', '', 'default')).toBe('/registry/namespaces/default');
    expect(resourcePrefix('pods')).toBe('/registry/pods/');
    expect(namespacePrefix('pods', 'default')).toBe('/registry/pods/default/');
    expect(objectKey('pods', 'default', 'web-1').startsWith(namespacePrefix('pods', 'default'))).toBe(true);
  });

  it.each<[string, ParsedKey]>([
    ['/registry/pods/default/web-1', { resource: 'pods', namespace: 'default', name: 'web-1' }],
    ['/registry/namespaces/kube-system', { resource: 'namespaces', name: 'kube-system' }],
    ['/registry/roles/ns/system:controller:x', { resource: 'roles', namespace: 'ns', name: 'system:controller:x' }],
  ])('parses %s back', (key, parsed) => {
    expect(parseKey(key)).toEqual(parsed);
    expect(objectKey(parsed.resource, parsed.namespace, parsed.name)).toBe(key);
  });

  it.each([
    ['a slash', 'a/b'],
    ['dot', '.'],
    ['dot-dot', '..'],
    ['empty', ''],
    ['percent-encoding', '%2e%2e'],
    ['space', 'a b'],
    ['non-ASCII', 'naïve'],
    ['NUL', 'a\0'],
    ['too long', 'a'.repeat(600)],
  ])('rejects a segment with %s wherever it appears', (_, bad) => {
    expect(invalid(() => objectKey('pods', 'default', bad))).toBe(true);
    // An empty namespace is how callers say "cluster-scoped" (as Kubernetes does).
    if (bad !== '') expect(invalid(() => objectKey('pods', bad, 'x'))).toBe(true);
    expect(invalid(() => objectKey(bad, 'default', 'x'))).toBe(true);
    expect(invalid(() => namespacePrefix('pods', bad))).toBe(true);
  });

  it.each([
    '/other/pods/a',
    '/registry/pods',
    '/registry/pods/a/b/c',
    '/registry/pods/../x',
    '/registry/pods//x',
    '/registry/pods/a/',
  ])('parseKey rejects %s', (key) => {
    expect(invalid(() => parseKey(key))).toBe(true);
  });

  it('checkKey and checkPrefix accept the shapes backends store and nothing else', () => {
    expect(invalid(() => checkKey('/registry/pods/a/b'))).toBe(false);
    for (const bad of ['', '/', 'x', '/a/', '/a b', '/ä']) expect(invalid(() => checkKey(bad))).toBe(true);
    expect(invalid(() => checkPrefix('/registry/pods/'))).toBe(false);
    expect(invalid(() => checkPrefix('/'))).toBe(false);
    for (const bad of ['', '/registry/pods', 'registry/', '/a b/']) expect(invalid(() => checkPrefix(bad))).toBe(true);
  });

  it('prefixEnd bounds exactly the keys under the prefix', () => {
    const p = '/registry/pods/a/';
    const end = prefixEnd(p);
    expect('/registry/pods/a/zzz' < end).toBe(true);
    expect('/registry/pods/a/~~~' < end).toBe(true);
    expect('/registry/pods/ab/x' < end).toBe(false);
    expect('/registry/pods/a0' >= end).toBe(true);
  });
});
