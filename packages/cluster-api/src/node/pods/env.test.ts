import { describe, expect, it } from 'vitest';
import { containerEnv, expand } from './env.js';
import type { PodSources } from '../sources.js';
import type { Pod } from '../types.js';

describe('expand', () => {
  const vars: Record<string, string> = { A: 'x', B: 'y' };
  it.each([
    ['$(A)-$(B)', 'x-y'], ['$$(A)', '$(A)'], ['$(MISSING)', '$(MISSING)'], ['$(A', '$(A'], ['a$b', 'a$b'], ['$', '$'], ['$$$(A)', '$x'],
  ])('%s → %s', (input, want) => expect(expand(input, (n) => vars[n])).toBe(want));
});

describe('containerEnv', () => {
  const sources: PodSources = {
    configMap: async (_ns, name) => (name === 'cm' ? { data: { a: '1', 'bad=key': '2' }, binary: {} } : undefined),
    secret: async () => undefined,
    token: async () => ({ token: '', expiresAt: 0 }),
  };
  const pod: Pod = { metadata: { name: 'p', namespace: 'ns' }, spec: { containers: [] } };
  const place = { podIP: '127.64.0.2', hostIP: '127.0.0.1', allocatable: { memory: '1Gi', cpu: '2' } };

  it('takes envFrom then env, later names winning, and reports skipped keys', async () => {
    const c = { name: 'c', envFrom: [{ configMapRef: { name: 'cm' } }], env: [{ name: 'a', value: 'over' }, { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } }] };
    const { env, skipped } = await containerEnv(pod, c, { BASE: 'b' }, sources, place);
    expect(env).toEqual({ BASE: 'b', a: 'over', CPU: '2000' });
    expect(skipped).toEqual([{ source: 'configMap ns/cm', keys: ['bad=key'] }]);
  });

  it.each([
    [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'cm', key: 'nope' } } }, "couldn't find key nope in ConfigMap ns/cm"],
    [{ name: 'X', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } }, 'secret "s" not found'],
    [{ name: 'X', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }, 'unsupported fieldPath: spec.bogus'],
    [{ name: 'X', valueFrom: { resourceFieldRef: { resource: 'limits.gpu' } } }, 'unsupported container resource : limits.gpu'],
  ])('refuses %j as the kubelet words it', async (v, message) => {
    await expect(containerEnv(pod, { name: 'c', env: [v] }, {}, sources, place)).rejects.toThrow(message);
  });
});
