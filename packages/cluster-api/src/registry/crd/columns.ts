/**
 * additionalPrinterColumns as kube-apiserver renders them in Tables (its CRD table convertor): the
 * first value the column's JSONPath finds, typed by the column (`integer`, `number`, `boolean`,
 * `string`, `date` as a human age), null when there is none or it has another type (kubectl prints
 * `<none>`). Selectable fields read the same paths for field selectors.
 */
import type { KubeObject } from '../../api/meta.js';
import type { TableColumn } from '../definition.js';
import { humanAge } from '../generic/meta.js';
import { evaluate, parse, type JsonPathStep } from './jsonpath.js';
import type { PrinterColumn } from './types.js';

/** A string column prints what jsonpath would print: strings as they are, anything else as JSON. */
const printed = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

const cellOf = (type: string, v: unknown): unknown => {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof v === 'number' ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date':
      return typeof v === 'string' ? (Number.isNaN(Date.parse(v)) ? '<invalid>' : humanAge(v)) : null;
    default:
      return printed(v);
  }
};

const firstValue = (steps: readonly JsonPathStep[], o: KubeObject): unknown => evaluate(steps, o)[0];

export const printerColumn = (col: PrinterColumn): TableColumn => {
  const steps = parse(col.jsonPath);
  return {
    name: col.name,
    type: col.type as TableColumn['type'],
    ...(col.format && { format: col.format }),
    ...(col.description && { description: col.description }),
    ...(col.priority && { priority: col.priority }),
    cell: (o) => cellOf(col.type, firstValue(steps, o)),
  };
};

/** A selectable field's value for field selectors: strings, numbers and booleans as text, '' when absent. */
export const selectableValue = (steps: readonly JsonPathStep[], o: KubeObject): string => {
  const v = firstValue(steps, o);
  return v === undefined || v === null || typeof v === 'object' ? '' : String(v);
};

export { parse };
