/**
 * CESQL v1 values and casts (spec §3.1, §3.7). A failed cast yields the target type's zero value
 * and a cast error, as every operator in CESQL is total.
 */

export type Value = string | number | boolean;
export type ValueType = 'String' | 'Integer' | 'Boolean';

/** The error kinds of spec §3.3, named as the conformance suite (cesql_tck) names them. */
export type CesqlErrorKind = 'parse' | 'math' | 'cast' | 'missingAttribute' | 'missingFunction' | 'functionEvaluation';

export interface CesqlError {
  readonly kind: CesqlErrorKind;
  readonly message: string;
}

/** A value with the errors met computing it. */
export interface Result {
  readonly value: Value;
  readonly errors: readonly CesqlError[];
}

export const ZERO: Readonly<Record<ValueType, Value>> = { String: '', Integer: 0, Boolean: false };

export function typeOf(v: Value): ValueType {
  return typeof v === 'string' ? 'String' : typeof v === 'number' ? 'Integer' : 'Boolean';
}

/** 32-bit two's-complement wrap, as integer arithmetic in CESQL's reference engines behaves. */
export function int32(n: number): number {
  return n | 0;
}

const INTEGER = /^[+-]?[0-9]+$/;

/** Casts `v` to `to`; `errors` receives a cast error when the value has no such form. */
export function cast(v: Value, to: ValueType, errors: CesqlError[]): Value {
  const from = typeOf(v);
  if (from === to) return v;
  if (to === 'String') return String(v);
  if (to === 'Integer') {
    if (typeof v === 'boolean') return v ? 1 : 0;
    const s = v as string;
    const n = INTEGER.test(s) ? Number(s) : NaN;
    if (Number.isSafeInteger(n) && n >= -2147483648 && n <= 2147483647) return n;
    errors.push({ kind: 'cast', message: `cannot cast ${JSON.stringify(s)} to Integer` });
    return 0;
  }
  if (typeof v === 'number') return v !== 0;
  const lower = (v as string).toLowerCase();
  if (lower === 'true' || lower === 'false') return lower === 'true';
  errors.push({ kind: 'cast', message: `cannot cast ${JSON.stringify(v)} to Boolean` });
  return false;
}
