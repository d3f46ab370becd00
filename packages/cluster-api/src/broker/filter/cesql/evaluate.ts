/**
 * CESQL v1 evaluation. Every node yields a value and the errors met (spec §3.3). An operator whose
 * operand already failed yields its own zero value with that operand's errors and computes nothing
 * more, so `missing / 0` is a missing-attribute error, not a division by zero; an operator that fails
 * itself (division by zero, a bad cast) yields the value the spec gives with its error. AND and OR
 * short-circuit. Implicit casts follow §3.7: `=`/`!=`/`<>` cast the left operand to the right
 * operand's type, IN casts the set to the left operand's type, the rest cast to their parameters.
 */
import type { AttributeValue } from '../../event/event.js';
import { lookupFunction } from './functions.js';
import { likeMatcher } from './like.js';
import type { Node } from './parser.js';
import { type CesqlError, cast, int32, type Result, type Value, type ValueType, typeOf, ZERO } from './values.js';

export type Attributes = Readonly<Record<string, AttributeValue>>;

const ok = (value: Value): Result => ({ value, errors: [] });
const failed = (type: ValueType, errors: readonly CesqlError[]): Result => ({ value: ZERO[type], errors });

const COMPARE = new Set(['=', '!=', '<>']);
const ORDER = new Set(['<', '<=', '>', '>=']);
const LOGIC = new Set(['AND', 'OR', 'XOR']);

function arithmetic(op: string, a: number, b: number, errors: CesqlError[]): number {
  switch (op) {
    case '+':
      return int32(a + b);
    case '-':
      return int32(a - b);
    case '*':
      return int32(Math.imul(a, b));
    default:
      if (b === 0) {
        errors.push({ kind: 'math', message: op === '/' ? 'division by zero' : 'modulo by zero' });
        return 0;
      }
      return op === '/' ? int32(Math.trunc(a / b)) : int32(a % b);
  }
}

function order(op: string, a: number, b: number): boolean {
  return op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
}

function logic(node: Node & { k: 'bin' }, attrs: Attributes): Result {
  const l = evaluate(node.l, attrs);
  if (l.errors.length > 0) return failed('Boolean', l.errors);
  const errors: CesqlError[] = [];
  const a = cast(l.value, 'Boolean', errors) as boolean;
  if (node.op === 'AND' && !a && errors.length === 0) return ok(false);
  if (node.op === 'OR' && a && errors.length === 0) return ok(true);
  const r = evaluate(node.r, attrs);
  if (r.errors.length > 0) return failed('Boolean', [...errors, ...r.errors]);
  const b = cast(r.value, 'Boolean', errors) as boolean;
  const value = node.op === 'AND' ? a && b : node.op === 'OR' ? a || b : a !== b;
  return { value, errors };
}

function binary(node: Node & { k: 'bin' }, attrs: Attributes): Result {
  if (LOGIC.has(node.op)) return logic(node, attrs);
  const returns: ValueType = COMPARE.has(node.op) || ORDER.has(node.op) ? 'Boolean' : 'Integer';
  const l = evaluate(node.l, attrs);
  if (l.errors.length > 0) return failed(returns, l.errors);
  const r = evaluate(node.r, attrs);
  if (r.errors.length > 0) return failed(returns, r.errors);
  const errors: CesqlError[] = [];
  if (COMPARE.has(node.op)) {
    const equal = cast(l.value, typeOf(r.value), errors) === r.value;
    return { value: node.op === '=' ? equal : !equal, errors };
  }
  const a = cast(l.value, 'Integer', errors) as number;
  const b = cast(r.value, 'Integer', errors) as number;
  return { value: ORDER.has(node.op) ? order(node.op, a, b) : arithmetic(node.op, a, b, errors), errors };
}

function call(node: Node & { k: 'call' }, attrs: Attributes): Result {
  const fn = lookupFunction(node.name, node.args.length);
  if (!fn) return failed('Boolean', [{ kind: 'missingFunction', message: `no function ${node.name} taking ${node.args.length} argument(s)` }]);
  const errors: CesqlError[] = [];
  const args: Value[] = [];
  for (const [i, arg] of node.args.entries()) {
    const r = evaluate(arg, attrs);
    if (r.errors.length > 0) return failed(fn.returns, r.errors);
    args.push(cast(r.value, fn.params[i] ?? fn.rest!, errors));
  }
  const value = fn.impl(args, errors);
  return { value, errors };
}

function unary(node: Node & { k: 'not' | 'neg' }, attrs: Attributes): Result {
  const type: ValueType = node.k === 'not' ? 'Boolean' : 'Integer';
  const x = evaluate(node.x, attrs);
  if (x.errors.length > 0) return failed(type, x.errors);
  const errors: CesqlError[] = [];
  const v = cast(x.value, type, errors);
  return { value: node.k === 'not' ? !v : int32(-(v as number)), errors };
}

function membership(node: Node & { k: 'like' | 'in' }, attrs: Attributes): Result {
  const x = evaluate(node.x, attrs);
  if (x.errors.length > 0) return failed('Boolean', x.errors);
  const errors: CesqlError[] = [];
  let found = false;
  if (node.k === 'like') {
    found = likeMatcher(node.pattern)(cast(x.value, 'String', errors) as string);
  } else {
    for (const item of node.set) {
      const r = evaluate(item, attrs);
      if (r.errors.length > 0) return failed('Boolean', r.errors);
      if (cast(r.value, typeOf(x.value), errors) === x.value) found = true;
    }
  }
  return { value: node.negate ? !found : found, errors };
}

export function evaluate(node: Node, attrs: Attributes): Result {
  switch (node.k) {
    case 'lit':
      return ok(node.v);
    case 'attr': {
      const v = attrs[node.name];
      return v === undefined ? failed('Boolean', [{ kind: 'missingAttribute', message: `the event has no attribute ${node.name}` }]) : ok(v);
    }
    case 'exists':
      return ok(attrs[node.name] !== undefined);
    case 'not':
    case 'neg':
      return unary(node, attrs);
    case 'bin':
      return binary(node, attrs);
    case 'like':
    case 'in':
      return membership(node, attrs);
    case 'call':
      return call(node, attrs);
  }
}
