import { describe, expect, it } from 'vitest';
import type { ResourceDefinition } from '../registry/definition.js';
import { humanDuration, includeObjectOf, toTable } from './table.js';

const def = {
  group: '', version: 'v1', kind: 'Pod', listKind: 'PodList', plural: 'pods', singular: 'pod', namespaced: true,
  verbs: ['get', 'list'], strategy: {},
  columns: [
    { name: 'Status', type: 'string', cell: (o) => (o.status as { phase?: string } | undefined)?.phase },
    { name: 'Broken', type: 'string', cell: () => { throw new Error('x'); } },
    { name: 'Node', type: 'string', priority: 1, cell: () => 'n1' },
  ],
} satisfies ResourceDefinition;

const pod = (name: string, ageMs: number) => ({
  apiVersion: 'v1', kind: 'Pod', status: { phase: 'Pending' },
  metadata: { name, namespace: 'ns', labels: { a: 'b' }, creationTimestamp: new Date(Date.now() - ageMs).toISOString() },
});

describe('toTable', () => {
  it('puts Name first and Age after the standard columns, wide ones last, with partial object metadata rows', () => {
    const a = pod('a', 5000);
    const t = toTable(def, { apiVersion: 'v1', kind: 'PodList', metadata: { resourceVersion: '9', continue: 'c' }, items: [a] }, 'Metadata');
    expect(t.kind).toBe('Table');
    expect(t.apiVersion).toBe('meta.k8s.io/v1');
    expect(t.metadata).toEqual({ resourceVersion: '9', continue: 'c' });
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Status', 'Broken', 'Age', 'Node']);
    expect(t.columnDefinitions.map((c) => c.priority)).toEqual([0, 0, 0, 0, 1]);
    expect(t.columnDefinitions[0]).toMatchObject({ type: 'string', format: 'name', priority: 0 });
    expect(t.rows[0]!.cells).toEqual(['a', 'Pending', '<unknown>', expect.stringMatching(/^[45]s$/), 'n1']);
    expect(t.rows[0]!.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: a.metadata });
  });

  it('renders one object as a one-row table and honours includeObject', () => {
    const p = pod('b', 0);
    expect(toTable(def, p, 'None', 'v1beta1')).toMatchObject({ apiVersion: 'meta.k8s.io/v1beta1', rows: [{ cells: ['b', 'Pending', '<unknown>', '0s', 'n1'] }] });
    expect(toTable(def, p, 'None').rows[0]).not.toHaveProperty('object');
    expect(toTable(def, p, 'Object').rows[0]!.object).toBe(p);
  });

  it('reads includeObject', () => {
    expect(includeObjectOf(null)).toBe('Metadata');
    expect(includeObjectOf('Object')).toBe('Object');
    expect(() => includeObjectOf('All')).toThrow(expect.objectContaining({ code: 400 }));
  });

  it.each([
    [-5000, '<invalid>'], [0, '0s'], [119_000, '119s'], [125_000, '2m5s'], [600_000, '10m'], [3 * 3600_000 + 60_000, '3h1m'],
    [10 * 3600_000, '10h'], [50 * 3600_000, '2d2h'], [30 * 86400_000, '30d'], [800 * 86400_000, '2y70d'], [3000 * 86400_000, '8y'],
  ])('humanDuration(%i) = %s', (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });
});
