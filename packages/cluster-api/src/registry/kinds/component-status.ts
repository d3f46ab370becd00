/**
 * ComponentStatus: read-only (get, list) health of this server's own components. Objects are not
 * stored: registry/component-store.ts builds them from a provider on every read.
 */
import { arr, column, core, obj, str } from './common.js';
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
  columns: [
    column('Status', (o) => (healthy(o).status === 'True' ? 'Healthy' : 'Unhealthy')),
    column('Message', (o) => str(healthy(o).message)),
    column('Error', (o) => str(healthy(o).error)),
  ],
});
