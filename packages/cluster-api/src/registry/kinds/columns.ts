/**
 * What `kubectl get` columns are made of, as Kubernetes' printers (pkg/printers/internalversion)
 * compute them on the server: the Name and Age columns, durations as kubectl users read them, and
 * the cells several kinds share (containers and images of a pod template, label selectors).
 */
import type { KubeObject } from '../../api/meta.js';
import type { TableColumn } from '../definition.js';
import { arr, obj, str } from './common.js';
import { humanAge as age } from '../generic/meta.js';
import { formatLabelSelector } from './label-selector.js';

export { humanDuration } from '../generic/meta.js';

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace.',
  cell: (o) => o.metadata.name ?? '',
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o) => humanAge(o.metadata.creationTimestamp),
};

/** translateTimestampSince for any field value: `<unknown>` for an absent or unreadable time. */
export const humanAge = (timestamp: unknown): string => age(typeof timestamp === 'string' ? timestamp : undefined);

/** The pod template's containers (`spec.template.spec.containers`, or under `at`). */
const containersOf = (template: unknown): Record<string, unknown>[] => arr(obj(obj(template).spec).containers).map(obj);

/** layoutContainerCells: the Containers and Images columns of a kind with a pod template, `-o wide`. */
export const templateColumns = (template: (o: KubeObject) => unknown, selector?: (o: KubeObject) => unknown): TableColumn[] => [
  { name: 'Containers', type: 'string', priority: 1, description: 'Names of each container in the template.', cell: (o) => containersOf(template(o)).map((c) => str(c.name)).join(',') },
  { name: 'Images', type: 'string', priority: 1, description: 'Images referenced by each container in the template.', cell: (o) => containersOf(template(o)).map((c) => str(c.image)).join(',') },
  ...(selector ? [{ name: 'Selector', type: 'string' as const, priority: 1, description: 'A label query over pods that should match the replica count.', cell: (o: KubeObject) => formatLabelSelector(selector(o)) }] : []),
];

/** An integer cell (int64 in Kubernetes' printers): 0 when absent. */
export const count = (v: unknown): number => (typeof v === 'number' ? v : 0);
