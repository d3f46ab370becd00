/**
 * CESQL's built-in functions (spec §3.5, and the casting functions INT, BOOL, STRING, IS_INT,
 * IS_BOOL that the conformance suite and CloudEvents' SDKs keep). Overloads are told apart by arity;
 * a variadic form counts its fixed parameters. Arguments arrive already cast to the parameter types.
 */
import { type CesqlError, cast, type Value, type ValueType } from './values.js';

export interface Fn {
  readonly returns: ValueType;
  readonly params: readonly ValueType[];
  /** The type of the arguments after `params`, for a variadic function. */
  readonly rest?: ValueType;
  readonly impl: (args: readonly Value[], errors: CesqlError[]) => Value;
}

const fnError = (errors: CesqlError[], message: string): void => {
  errors.push({ kind: 'functionEvaluation', message });
};

const chars = (s: string): string[] => [...s];

function substring(args: readonly Value[], errors: CesqlError[]): Value {
  const x = chars(args[0] as string);
  const pos = args[1] as number;
  const len = args.length > 2 ? (args[2] as number) : undefined;
  if (pos > x.length || pos < -x.length || (len !== undefined && len < 0)) {
    fnError(errors, 'SUBSTRING position or length out of range');
    return '';
  }
  if (pos === 0) return '';
  const start = pos > 0 ? pos - 1 : x.length + pos;
  return x.slice(start, len === undefined ? undefined : start + len).join('');
}

function side(from: 'left' | 'right') {
  return (args: readonly Value[], errors: CesqlError[]): Value => {
    const x = args[0] as string;
    const n = args[1] as number;
    if (n < 0) {
      fnError(errors, `${from.toUpperCase()} length is negative`);
      return x;
    }
    const c = chars(x);
    return (from === 'left' ? c.slice(0, n) : c.slice(Math.max(0, c.length - n))).join('');
  };
}

const S = 'String' as const;
const I = 'Integer' as const;
const B = 'Boolean' as const;

const FUNCTIONS: Record<string, readonly Fn[]> = {
  LENGTH: [{ returns: I, params: [S], impl: (a) => chars(a[0] as string).length }],
  CONCAT: [{ returns: S, params: [], rest: S, impl: (a) => a.join('') }],
  CONCAT_WS: [{ returns: S, params: [S], rest: S, impl: (a) => a.slice(1).join(a[0] as string) }],
  LOWER: [{ returns: S, params: [S], impl: (a) => (a[0] as string).toLowerCase() }],
  UPPER: [{ returns: S, params: [S], impl: (a) => (a[0] as string).toUpperCase() }],
  TRIM: [{ returns: S, params: [S], impl: (a) => (a[0] as string).trim() }],
  LEFT: [{ returns: S, params: [S, I], impl: side('left') }],
  RIGHT: [{ returns: S, params: [S, I], impl: side('right') }],
  SUBSTRING: [
    { returns: S, params: [S, I], impl: substring },
    { returns: S, params: [S, I, I], impl: substring },
  ],
  ABS: [
    {
      returns: I,
      params: [I],
      impl: (a, errors) => {
        const n = a[0] as number;
        if (n !== -2147483648) return Math.abs(n);
        errors.push({ kind: 'math', message: 'ABS(-2147483648) overflows a 32-bit integer' });
        return 2147483647;
      },
    },
  ],
  INT: [{ returns: I, params: [I], impl: (a) => a[0]! }],
  BOOL: [{ returns: B, params: [B], impl: (a) => a[0]! }],
  STRING: [{ returns: S, params: [S], impl: (a) => a[0]! }],
  IS_INT: [{ returns: B, params: [S], impl: (a) => cast(a[0]!, I, []) !== 0 || /^[+-]?0+$/.test(a[0] as string) }],
  IS_BOOL: [{ returns: B, params: [S], impl: (a) => /^(true|false)$/i.test(a[0] as string) }],
};

/** The overload of `name` that takes `arity` arguments, if any. */
export function lookupFunction(name: string, arity: number): Fn | undefined {
  return FUNCTIONS[name]?.find((f) => (f.rest ? arity >= f.params.length : arity === f.params.length));
}
