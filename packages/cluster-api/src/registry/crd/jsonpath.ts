/**
 * The JSONPath of printer columns and selectable fields, as client-go's jsonpath evaluates a CRD's
 * `jsonPath` (wrapped in `{…}`): fields (`.a.b`, `['a.b']`, `\.` inside a name), indices and slices'
 * single indices (`[0]`, `[-1]`), wildcards (`[*]`, `.*`), recursive descent (`..name`) and filters
 * (`[?(@.type=="Ready")]`, `==` `!=` `<` `<=` `>` `>=`, or a bare `@.field` for presence). A column
 * shows the first value found; none found is an empty cell.
 */
import { isObject } from '../generic/meta.js';

type Step =
  | { type: 'field'; name: string }
  | { type: 'index'; at: number }
  | { type: 'wildcard' }
  | { type: 'recursive'; name?: string }
  | { type: 'filter'; path: Step[]; op?: string; value?: unknown };

export class JsonPathError extends Error {}

const readName = (src: string, from: number): [string, number] => {
  let name = '';
  let i = from;
  while (i < src.length && !'.[ '.includes(src[i]!)) {
    if (src[i] === '\\' && i + 1 < src.length) i++;
    name += src[i++];
  }
  return [name, i];
};

const literal = (text: string): unknown => {
  const t = text.trim();
  if (/^(['"]).*\1$/s.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && !Number.isNaN(Number(t))) return Number(t);
  throw new JsonPathError(`unrecognized filter value ${t}`);
};

const parseFilter = (body: string): Step => {
  const m = /^@((?:\.[^=!<>\s]+)*)\s*(==|!=|<=|>=|<|>)?\s*(.*)$/s.exec(body.trim());
  if (!m) throw new JsonPathError(`unrecognized filter ${body}`);
  const path = m[1] ? parse(m[1]) : [];
  return m[2] ? { type: 'filter', path, op: m[2], value: literal(m[3]!) } : { type: 'filter', path };
};

const closing = (src: string, from: number): number => {
  let quote = '';
  for (let i = from; i < src.length; i++) {
    const c = src[i]!;
    if (quote) quote = c === quote ? '' : quote;
    else if (c === '"' || c === "'") quote = c;
    else if (c === ']') return i;
  }
  throw new JsonPathError('unterminated [');
};

const bracket = (inner: string): Step => {
  const t = inner.trim();
  if (t === '*') return { type: 'wildcard' };
  if (t.startsWith('?(') && t.endsWith(')')) return parseFilter(t.slice(2, -1));
  if (/^(['"]).*\1$/s.test(t)) return { type: 'field', name: t.slice(1, -1) };
  if (/^-?\d+$/.test(t)) return { type: 'index', at: Number(t) };
  throw new JsonPathError(`unsupported [${t}]`);
};

/** A column's path (`.status.url`, with or without `{}`) → steps; throws JsonPathError on what it cannot read. */
export const parse = (expression: string): Step[] => {
  let src = expression.trim();
  if (src.startsWith('{') && src.endsWith('}')) src = src.slice(1, -1).trim();
  if (src.startsWith('$')) src = src.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < src.length) {
    if (src.startsWith('..', i)) {
      const [name, next] = readName(src, i + 2);
      steps.push({ type: 'recursive', ...(name && name !== '*' ? { name } : {}) });
      i = next;
    } else if (src[i] === '.') {
      const [name, next] = readName(src, i + 1);
      if (!name) throw new JsonPathError(`missing field name at ${i}`);
      steps.push(name === '*' ? { type: 'wildcard' } : { type: 'field', name });
      i = next;
    } else if (src[i] === '[') {
      const end = closing(src, i + 1);
      steps.push(bracket(src.slice(i + 1, end)));
      i = end + 1;
    } else throw new JsonPathError(`unrecognized character in ${expression} at ${i}`);
  }
  return steps;
};

const children = (v: unknown): unknown[] => (Array.isArray(v) ? v : isObject(v) ? Object.values(v) : []);

const compare = (a: unknown, op: string, b: unknown): boolean => {
  switch (op) {
    case '==': return a === b;
    case '!=': return a !== b;
    default: {
      if (typeof a !== typeof b || (typeof a !== 'number' && typeof a !== 'string')) return false;
      const [x, y] = [a as number | string, b as number | string];
      return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
    }
  }
};

const descend = (v: unknown, out: unknown[]): void => {
  out.push(v);
  for (const c of children(v)) descend(c, out);
};

const apply = (step: Step, v: unknown): unknown[] => {
  switch (step.type) {
    case 'field':
      return isObject(v) && Object.hasOwn(v, step.name) ? [v[step.name]] : [];
    case 'index': {
      if (!Array.isArray(v)) return [];
      const at = step.at < 0 ? v.length + step.at : step.at;
      return at >= 0 && at < v.length ? [v[at]] : [];
    }
    case 'wildcard':
      return children(v);
    case 'recursive': {
      const all: unknown[] = [];
      descend(v, all);
      return step.name === undefined ? all : all.flatMap((x) => apply({ type: 'field', name: step.name! }, x));
    }
    case 'filter':
      return children(v).filter((item) => {
        const found = evaluate(step.path, item);
        if (step.op === undefined) return found.length > 0;
        return found.some((x) => compare(x, step.op!, step.value));
      });
  }
};

/** Every value `steps` reach from `root`. */
export const evaluate = (steps: readonly Step[], root: unknown): unknown[] =>
  steps.reduce<unknown[]>((values, step) => values.flatMap((v) => apply(step, v)), [root]);

export type { Step as JsonPathStep };
