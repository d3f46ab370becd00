/**
 * What `kubectl get` columns are made of, as Kubernetes' printers (pkg/printers/internalversion)
 * compute them on the server: the Name and Age columns, durations as kubectl users read them, and
 * the cells several kinds share (containers and images of a pod template, label selectors).
 */
import type { KubeObject } from '../../api/meta.js';
import type { TableColumn } from '../definition.js';
import { arr, obj, str } from './common.js';
import { formatLabelSelector } from './label-selector.js';

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

/** k8s.io/apimachinery/pkg/util/duration.HumanDuration: the AGE kubectl users read. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

/** translateTimestampSince: `<unknown>` for an absent or unreadable time. */
export const humanAge = (timestamp: unknown): string => {
  if (typeof timestamp !== 'string' || !timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(Date.now() - t);
};

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
