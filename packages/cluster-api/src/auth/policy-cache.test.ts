import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryStorage } from '../storage/memory/memory.js';
import { createRegistry, ensureSystemNamespaces } from '../registry/index.js';
import type { Registry } from '../registry/rest.js';
import { PolicyCache } from './policy-cache.js';

const ctx = (namespace?: string) => ({ namespace, user: { name: 'system:admin', uid: '', groups: ['system:masters'] } });

const binding = (name: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name, namespace: 'default' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'ann' }],
});

/** Resolves after the event loop's check phase: the watch cache has delivered what was written before. */
const turn = () => new Promise((r) => setImmediate(() => setImmediate(r)));

describe('PolicyCache.sync', () => {
  let registry: Registry;
  let policy: PolicyCache;

  beforeEach(async () => {
    registry = createRegistry(new MemoryStorage());
    await ensureSystemNamespaces(registry);
    policy = new PolicyCache(registry);
    await policy.ready;
  });
  afterEach(() => policy.close());

  const bindings = () => registry.find('rbac.authorization.k8s.io', 'v1', 'rolebindings')!;
  const names = () => policy.roleBindings('default').map((b) => b.metadata.name);

  it('has a binding written a moment ago once it resolves, before the watch delivers it', async () => {
    let delivered = false;
    await bindings().create(ctx('default'), binding('a'));
    setImmediate(() => (delivered = true));
    await policy.sync();
    expect(delivered).toBe(false);
    expect(names()).toEqual(['a']);
  });

  it('ignores the watch events a live list already brought in, and applies later ones', async () => {
    await bindings().create(ctx('default'), binding('a'));
    await policy.sync();
    const generation = policy.generation;
    await turn();
    expect(policy.generation).toBe(generation);
    await bindings().delete(ctx('default'), 'a', {});
    await turn();
    expect(names()).toEqual([]);
    expect(policy.generation).toBe(generation + 1);
  });

  it('sees a deletion at once, and moves nothing when nothing changed', async () => {
    await bindings().create(ctx('default'), binding('a'));
    await turn();
    const generation = policy.generation;
    await policy.sync();
    expect(policy.generation).toBe(generation);
    await bindings().delete(ctx('default'), 'a', {});
    await policy.sync();
    expect(names()).toEqual([]);
  });

  it('shares one pass among concurrent callers and queues one behind it', async () => {
    const first = policy.sync();
    const second = policy.sync();
    const third = policy.sync();
    expect(second).toBe(third);
    expect(second).not.toBe(first);
    await Promise.all([first, second]);
  });
});
