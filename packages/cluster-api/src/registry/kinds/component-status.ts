/**
 * ComponentStatus: read-only (get, list) health of this server's own components. Objects are not
 * stored: the kind's own store (component-store.ts) builds them from the server's report on every read.
 */
import { arr, column, core, obj, str } from './common.js';
import { componentStore } from './component-store.js';
import type { KubeObject } from '../../api/meta.js';

const healthy = (o: KubeObject) => obj(arr(o.conditions).map(obj).find((c) => c.type === 'Healthy'));

export const componentStatus = core({
  kind: 'ComponentStatus',
  plural: 'componentstatuses',
  singular: 'componentstatus',
  namespaced: false,
  verbs: ['get', 'list'],
  shortNames: ['cs'],
  fields: ['conditions'],
  strategy: {},
  store: componentStore,
  // componentStatusColumnDefinitions: no Age.
  columnLayout: 'declared',
  columns: [
    column('Status', (o) => (healthy(o).status === 'True' ? 'Healthy' : 'Unhealthy')),
    column('Message', (o) => str(healthy(o).message)),
    column('Error', (o) => str(healthy(o).error)),
  ],
});
