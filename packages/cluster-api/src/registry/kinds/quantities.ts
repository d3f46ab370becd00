/** Validation of resource lists (`{cpu: "100m", memory: "1Gi"}`) shared by quota, limits and volumes. */
import { invalidValue, notSupported, required, type FieldError } from '../generic/validation.js';
import { parseAmount } from '../../api/quantity.js';
import { AccessModes, arr, isQuantity, obj, QuantityMessage } from './common.js';

/** Every value a quantity of resource.Quantity's grammar that also has a value (`1.2.3` matches the expression but is none). */
export const validateResourceList = (list: unknown, at: string): FieldError[] =>
  Object.entries(obj(list)).flatMap(([k, v]) => (isQuantity(v) && parseAmount(v) !== undefined ? [] : [invalidValue(`${at}[${k}]`, v, QuantityMessage)]));

export const validateAccessModes = (modes: unknown, at: string): FieldError[] => {
  const list = arr(modes);
  if (list.length === 0) return [required(at, 'at least 1 access mode is required')];
  return list.flatMap((m, i) => (AccessModes.includes(m as never) ? [] : [notSupported(`${at}[${i}]`, m, AccessModes)]));
};
