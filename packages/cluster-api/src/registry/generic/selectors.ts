/**
 * Label and field selectors as Kubernetes parses them (k8s.io/apimachinery/pkg/labels and
 * pkg/fields). Parse errors become 400 BadRequest with Kubernetes' wording, which kubectl prints.
 */
import type { KubeObject } from '../../api/meta.js';
import type { ResourceDefinition } from '../definition.js';
import { badRequest } from '../../api/errors.js';
import { isQualifiedName, isValidLabelValue } from './validation.js';

export type Labels = Readonly<Record<string, string>>;
export type Matcher = (labels: Labels) => boolean;

type Token = { kind: 'id' | 'op' | 'end'; text: string };
const opChars = new Set(['!', '=', '(', ')', ',', '<', '>']);
const ops = ['!=', '==', '=', '!', '(', ')', ',', '<', '>'];

const lex = (input: string): Token[] => {
  const out: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) { i++; continue; }
    const op = ops.find((o) => input.startsWith(o, i));
    if (op) { out.push({ kind: 'op', text: op }); i += op.length; continue; }
    let j = i;
    while (j < input.length && !opChars.has(input[j]!) && !/\s/.test(input[j]!)) j++;
    out.push({ kind: 'id', text: input.slice(i, j) });
    i = j;
  }
  out.push({ kind: 'end', text: '' });
  return out;
};

const shown = (t: Token): string => t.text;

class LabelParser {
  private pos = 0;
  constructor(private readonly toks: Token[]) {}
  private peek = (): Token => this.toks[this.pos]!;
  private next = (): Token => this.toks[this.pos++]!;

  parse(): Matcher[] {
    const reqs: Matcher[] = [];
    if (this.peek().kind === 'end') return reqs;
    for (;;) {
      const t = this.peek();
      if (t.kind !== 'id' && t.text !== '!') throw new Error(`found '${shown(t)}', expected: !, identifier, or 'end of string'`);
      try { reqs.push(this.requirement()); } catch (e) { throw new Error(`unable to parse requirement: ${(e as Error).message}`); }
      const after = this.next();
      if (after.kind === 'end') return reqs;
      if (after.text !== ',') throw new Error(`found '${shown(after)}', expected: ',' or 'end of string'`);
    }
  }

  private key(): string {
    const t = this.next();
    if (t.kind !== 'id') throw new Error(`found '${shown(t)}', expected: identifier`);
    const errs = isQualifiedName(t.text);
    if (errs.length) throw new Error(`invalid label key "${t.text}": ${errs.join('; ')}`);
    return t.text;
  }

  private requirement(): Matcher {
    if (this.peek().text === '!') {
      this.next();
      const t = this.peek();
      if (t.kind !== 'id') throw new Error(`found '${shown(t)}', expected: identifier after '!'`);
      const key = this.key();
      return (l) => !(key in l);
    }
    const key = this.key();
    const op = this.peek();
    if (op.kind === 'end' || op.text === ',') return (l) => key in l;
    this.next();
    switch (op.text) {
      case '=': case '==': { const v = this.value(); return (l) => l[key] === v; }
      case '!=': { const v = this.value(); return (l) => l[key] !== v; }
      case '>': case '<': return this.compare(key, op.text);
    }
    if (op.text === 'in' || op.text === 'notin') {
      const set = this.valueSet();
      return op.text === 'in' ? (l) => key in l && set.has(l[key]!) : (l) => !(key in l) || !set.has(l[key]!);
    }
    throw new Error(`found '${shown(op)}', expected: in, notin, =, ==, !=, gt, lt`);
  }

  private compare(key: string, op: string): Matcher {
    const t = this.next();
    const n = Number(t.text);
    if (t.kind !== 'id' || !/^-?\d+$/.test(t.text)) throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer`);
    return (l) => key in l && /^-?\d+$/.test(l[key]!) && (op === '>' ? Number(l[key]) > n : Number(l[key]) < n);
  }

  private value(): string {
    const t = this.peek();
    if (t.kind === 'end' || t.text === ',') return this.checked('');
    if (t.kind !== 'id') throw new Error(`found '${shown(t)}', expected: identifier`);
    return this.checked(this.next().text);
  }

  private valueSet(): Set<string> {
    const open = this.next();
    if (open.text !== '(') throw new Error(`found '${shown(open)}', expected: '('`);
    const values = new Set<string>();
    for (;;) {
      const t = this.next();
      if (t.kind === 'id') values.add(this.checked(t.text));
      else if (t.text === ')' && values.size === 0) return new Set(['']);
      else throw new Error(`found '${shown(t)}', expected: ',', ')' or identifier`);
      const sep = this.next();
      if (sep.text === ')') return values;
      if (sep.text !== ',') throw new Error(`found '${shown(sep)}', expected: ',' or ')'`);
    }
  }

  private checked(v: string): string {
    const errs = isValidLabelValue(v);
    if (errs.length) throw new Error(`invalid label value: "${v}": at key: ${errs.join('; ')}`);
    return v;
  }
}

/** `labelSelector` → predicate over labels; 400 on a parse error. Empty selects everything. */
export const parseLabelSelector = (selector: string | undefined): Matcher => {
  if (!selector) return () => true;
  let reqs: Matcher[];
  try { reqs = new LabelParser(lex(selector)).parse(); } catch (e) { throw badRequest((e as Error).message); }
  return (labels) => reqs.every((r) => r(labels));
};

/* ---- Field selectors ---- */

export type FieldMatcher = (fields: Labels) => boolean;

const splitTerms = (s: string): string[] => {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) { cur += s[i]! + s[++i]!; continue; }
    if (s[i] === ',') { out.push(cur); cur = ''; continue; }
    cur += s[i];
  }
  out.push(cur);
  return out;
};

const unescape = (v: string): string => v.replace(/\\(.)/g, '$1');

/** The field labels a kind supports: metadata.name, metadata.namespace and its strategy's fieldsOf keys. */
export const supportedFields = (def: ResourceDefinition): Set<string> => {
  const blank = { apiVersion: '', kind: def.kind, metadata: {} };
  return new Set(['metadata.name', 'metadata.namespace', ...Object.keys(def.strategy.fieldsOf?.(blank) ?? {})]);
};

export const fieldsOf = (def: ResourceDefinition, obj: KubeObject): Labels => ({
  'metadata.name': obj.metadata.name ?? '',
  'metadata.namespace': obj.metadata.namespace ?? '',
  ...def.strategy.fieldsOf?.(obj),
});

/** `fieldSelector` → predicate over fieldsOf(); 400 on a parse error or an unsupported field. */
export const parseFieldSelector = (def: ResourceDefinition, selector: string | undefined): FieldMatcher => {
  if (!selector) return () => true;
  const supported = supportedFields(def);
  const terms = splitTerms(selector).filter((t) => t.length > 0).map((term) => {
    const op = ['!=', '==', '='].find((o) => term.includes(o));
    if (!op) throw badRequest(`invalid selector: '${selector}'; can't understand '${term}'`);
    const at = term.indexOf(op);
    const field = term.slice(0, at).trim();
    const value = unescape(term.slice(at + op.length));
    if (!supported.has(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, value, negate: op === '!=' };
  });
  return (f) => terms.every((t) => (f[t.field] === t.value) !== t.negate);
};

/** A single name requested through `metadata.name=x`, so list and watch can read one key. */
export const exactName = (selector: string | undefined): string | undefined => {
  if (!selector) return undefined;
  const terms = splitTerms(selector);
  const t = terms.length === 1 ? /^metadata\.name==?(.*)$/.exec(terms[0]!) : null;
  return t ? unescape(t[1]!) : undefined;
};
