/**
 * One conformance suite for every kind (Kubernetes' registry/rest/resttest): create a valid fixture →
 * get → list → update → patch → delete; an invalid fixture → 422 with causes; every verb the
 * definition does not offer → 405. Run from a test file over all definitions.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import type { Storage } from '../../storage/interface.js';
import { groupVersion, type ResourceDefinition, type Verb } from '../definition.js';
import { type Registry, type ResourceStore } from '../rest.js';
import { ApiError } from '../../api/errors.js';
import { fixtureFor } from './fixtures.js';

const Namespace = 'kind-test';

export const apiError = async (p: Promise<unknown>): Promise<ApiError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected the call to fail with an ApiError');
};

const calls: Record<Verb, (s: ResourceStore, ctx: { namespace?: string }) => Promise<unknown>> = {
  create: (s, ctx) => s.create(ctx, {}),
  get: (s, ctx) => s.get(ctx, 'x'),
  list: (s, ctx) => s.list(ctx, {}),
  watch: (s, ctx) => s.watch(ctx, {}, { onEvent: () => {}, onError: () => {} }),
  update: (s, ctx) => s.update(ctx, 'x', { metadata: { name: 'x' } }),
  patch: (s, ctx) => s.patch(ctx, 'x', 'merge', {}),
  delete: (s, ctx) => s.delete(ctx, 'x', {}),
  deletecollection: (s, ctx) => s.deleteCollection(ctx, {}, {}),
};

export interface KindTesterOptions {
  /** A fresh storage per test. */
  storage(): Storage;
  registry(storage: Storage): Registry;
}

/** A fresh copy each time: strategies default fields in place, and fixtures are shared by the group versions of a kind. */
const body = (def: ResourceDefinition, name: string, fixture: Record<string, unknown>) => structuredClone({
  apiVersion: groupVersion(def),
  kind: def.kind,
  ...fixture,
  metadata: { name, ...(fixture.metadata as object | undefined) },
});

export const testKind = (def: ResourceDefinition, opts: KindTesterOptions): void => {
  const id = `${groupVersion(def)} ${def.plural}`;
  const fixture = fixtureFor(def);
  const ctx = { namespace: def.namespaced ? Namespace : undefined };
  const opened: Storage[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });
  const setup = async () => {
    const storage = opts.storage();
    opened.push(storage);
    const registry = opts.registry(storage);
    await registry.find('', 'v1', 'namespaces')!.create({}, { metadata: { name: Namespace } });
    return { storage, store: registry.find(def.group, def.version, def.plural)! };
  };
  const can = (v: Verb) => def.verbs.includes(v);

  describe(id, () => {
    it('refuses the verbs it does not offer', async () => {
      const { store } = await setup();
      for (const verb of Object.keys(calls) as Verb[]) {
        if (can(verb)) continue;
        const err = await apiError(calls[verb](store, ctx));
        expect([verb, err.code]).toEqual([verb, 405]);
      }
    });

    if (fixture && can('create') && !def.ephemeral) it('create → get → list → update → patch → delete', async () => {
      const { store } = await setup();
      const created = (await store.create(ctx, body(def, 'kt-one', fixture!.valid))).object;
      expect(created).toMatchObject({ kind: def.kind, apiVersion: groupVersion(def), metadata: { name: 'kt-one', generation: 1 } });
      expect(created.metadata.uid).toBeTruthy();
      if (can('get')) expect(await store.get(ctx, 'kt-one')).toEqual(created);
      if (can('list')) {
        const list = await store.list(ctx, { fieldSelector: 'metadata.name=kt-one' });
        expect([list.kind, list.items.map((o) => o.metadata.name)]).toEqual([def.listKind, ['kt-one']]);
      }
      let current: KubeObject = created;
      if (can('update')) {
        current = (await store.update(ctx, 'kt-one', { ...current, metadata: { ...current.metadata, labels: { tested: 'update' } } })).object;
        expect(current.metadata.labels).toEqual({ tested: 'update' });
        expect(Number(current.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
      }
      if (can('patch')) {
        current = (await store.patch(ctx, 'kt-one', 'merge', { metadata: { labels: { tested: 'patch' } } })).object;
        expect(current.metadata.labels).toEqual({ tested: 'patch' });
      }
      if (can('delete')) {
        const out = await store.delete(ctx, 'kt-one', { gracePeriodSeconds: 0, propagationPolicy: 'Background' });
        // A kind that holds finalizers outside metadata (Namespace) is only marked: its controller removes it.
        const held = def.deletion?.heldBy !== undefined;
        expect([out.deleted, out.object.metadata.uid, Boolean(out.object.metadata.deletionTimestamp)]).toEqual([!held, created.metadata.uid, held]);
        if (can('get') && !held) expect((await apiError(store.get(ctx, 'kt-one'))).code).toBe(404);
      }
    });

    if (fixture && can('create')) it('answers 422 with causes for an invalid object', async () => {
      const { store } = await setup();
      const err = await apiError(store.create(ctx, body(def, 'kt-bad', fixture!.invalid)));
      expect([err.code, err.reason]).toEqual([422, 'Invalid']);
      expect(err.details?.causes?.map((c) => c.field)).toEqual(expect.arrayContaining(fixture!.invalidFields));
      expect(err.message).toContain(`${def.group ? `${def.kind}.${def.group}` : def.kind} "`);
    });

    if (fixture && def.ephemeral) it('answers a create without storing it', async () => {
      const { storage, store } = await setup();
      const before = await storage.currentRevision();
      // Enough for every review kind's question: a subject, a token, resource attributes in this namespace.
      const question = { user: 'a', token: 't', resourceAttributes: { verb: 'get', resource: 'pods', namespace: ctx.namespace ?? '' } };
      const out = (await store.create(ctx, { apiVersion: groupVersion(def), kind: def.kind, spec: question })).object;
      expect(out).toMatchObject({ kind: def.kind, spec: { user: 'a' } });
      expect(await storage.currentRevision()).toBe(before);
    });
  });
};

export const testKinds = (defs: readonly ResourceDefinition[], opts: KindTesterOptions): void => {
  for (const def of defs) testKind(def, opts);
};
