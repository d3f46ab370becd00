/**
 * The storage conformance suite: every backend (memory, sqlite, etcd) runs this one suite, so the
 * registry above can rely on identical semantics whatever `--storage` says.
 *
 *   storageConformance('sqlite', () => openStorage(`sqlite:${dir}/db.sqlite`));
 *
 * The factory is called once or more per test; every store it returns is closed after the test.
 * Tests use key roots of their own, so the factory may also hand out one shared store.
 */
import { afterEach, describe } from 'vitest';
import { crudCases } from './suite-crud.js';
import { listCases } from './suite-list.js';
import { Stores, type StorageFactory } from './suite-helpers.js';
import { watchCases } from './suite-watch.js';

export type { StorageFactory } from './suite-helpers.js';

export function storageConformance(name: string, factory: StorageFactory): void {
  describe(`storage conformance: ${name}`, () => {
    const stores = new Stores(factory);
    afterEach(() => stores.closeAll());
    describe('create / get / update / delete', () => crudCases(stores));
    describe('revisions, list and count', () => listCases(stores));
    describe('watch', () => watchCases(stores));
  });
}
