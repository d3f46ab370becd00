/**
 * CESQL v1 expressions into a tree, by precedence climbing over the order of spec §3.6 (tightest
 * first): function invocations; unary NOT and -; LIKE, EXISTS, IN; * / %; + -; comparisons;
 * AND, OR, XOR (one level, left to right, as the spec groups them).
 */
import { CesqlParseError, type Token, tokenize } from './lexer.js';
import type { Value } from './values.js';

export type Node =
  | { readonly k: 'lit'; readonly v: Value }
  | { readonly k: 'attr'; readonly name: string }
  | { readonly k: 'exists'; readonly name: string }
  | { readonly k: 'not'; readonly x: Node }
  | { readonly k: 'neg'; readonly x: Node }
  | { readonly k: 'bin'; readonly op: string; readonly l: Node; readonly r: Node }
  | { readonly k: 'like'; readonly x: Node; readonly pattern: string; readonly negate: boolean }
  | { readonly k: 'in'; readonly x: Node; readonly set: readonly Node[]; readonly negate: boolean }
  | { readonly k: 'call'; readonly name: string; readonly args: readonly Node[] };

const BINARY: Record<string, number> = {
  AND: 10, OR: 10, XOR: 10,
  '=': 20, '!=': 20, '<>': 20, '<': 20, '<=': 20, '>': 20, '>=': 20,
  '+': 30, '-': 30,
  '*': 40, '/': 40, '%': 40,
};
const POSTFIX = 50;
const PREFIX = 60;
const INT_MIN = -2147483648;
const INT_MAX = 2147483647;

class Parser {
  private i = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }
  private next(): Token {
    return this.tokens[this.i++]!;
  }
  private expect(kind: Token['kind'], what: string): Token {
    const t = this.next();
    if (t.kind !== kind) throw new CesqlParseError(`expected ${what}, found ${describe(t)}`, t.pos);
    return t;
  }

  parse(): Node {
    const node = this.expression(0);
    const t = this.peek();
    if (t.kind !== 'end') throw new CesqlParseError(`unexpected ${describe(t)}`, t.pos);
    return node;
  }

  private expression(minBp: number): Node {
    let left = this.prefix();
    for (;;) {
      const t = this.peek();
      const negated = t.kind === 'keyword' && t.text === 'NOT';
      const post = negated ? this.peek(1) : t;
      if (post.kind === 'keyword' && (post.text === 'LIKE' || post.text === 'IN')) {
        if (POSTFIX < minBp) return left;
        this.i += negated ? 2 : 1;
        left = post.text === 'LIKE' ? this.like(left, negated) : this.inSet(left, negated);
        continue;
      }
      const bp = (t.kind === 'op' || t.kind === 'keyword') && !negated ? BINARY[t.text] : undefined;
      if (bp === undefined || bp < minBp) return left;
      this.next();
      left = { k: 'bin', op: t.text, l: left, r: this.expression(bp + 1) };
    }
  }

  private like(x: Node, negate: boolean): Node {
    const p = this.next();
    if (p.kind !== 'string') throw new CesqlParseError(`the pattern of LIKE must be a string literal, found ${describe(p)}`, p.pos);
    return { k: 'like', x, pattern: p.text, negate };
  }

  private inSet(x: Node, negate: boolean): Node {
    this.expect('(', '( after IN');
    const set = [this.expression(0)];
    while (this.peek().kind === ',') {
      this.next();
      set.push(this.expression(0));
    }
    this.expect(')', ') closing the IN set');
    return { k: 'in', x, set, negate };
  }

  private integer(t: Token, sign: 1 | -1): Node {
    const v = sign * Number(t.text);
    if (!Number.isSafeInteger(v) || v < INT_MIN || v > INT_MAX) throw new CesqlParseError(`${sign < 0 ? '-' : ''}${t.text} is not a 32-bit integer`, t.pos);
    return { k: 'lit', v };
  }

  private prefix(): Node {
    const t = this.next();
    if (t.kind === 'int') return this.integer(t, 1);
    if (t.kind === 'string') return { k: 'lit', v: t.text };
    if (t.kind === '(') {
      const inner = this.expression(0);
      this.expect(')', ')');
      return inner;
    }
    if (t.kind === 'op' && (t.text === '-' || t.text === '+')) {
      if (this.peek().kind === 'int') return this.integer(this.next(), t.text === '-' ? -1 : 1);
      if (t.text === '-') return { k: 'neg', x: this.expression(PREFIX) };
    }
    if (t.kind === 'keyword') {
      if (t.text === 'TRUE' || t.text === 'FALSE') return { k: 'lit', v: t.text === 'TRUE' };
      if (t.text === 'NOT') return { k: 'not', x: this.expression(PREFIX) };
      if (t.text === 'EXISTS') return { k: 'exists', name: this.identifier(this.expect('ident', 'an attribute name after EXISTS')) };
    }
    if (t.kind === 'ident') return this.peek().kind === '(' ? this.call(t) : { k: 'attr', name: this.identifier(t) };
    throw new CesqlParseError(`unexpected ${describe(t)}`, t.pos);
  }

  private identifier(t: Token): string {
    if (!/^[A-Za-z0-9]+$/.test(t.text)) throw new CesqlParseError(`"${t.text}" is not an attribute name (letters and digits)`, t.pos);
    return t.text.toLowerCase();
  }

  private call(t: Token): Node {
    if (!/^[A-Za-z][A-Za-z_]*$/.test(t.text)) throw new CesqlParseError(`"${t.text}" is not a function name`, t.pos);
    this.next();
    const args: Node[] = [];
    if (this.peek().kind !== ')') {
      args.push(this.expression(0));
      while (this.peek().kind === ',') {
        this.next();
        args.push(this.expression(0));
      }
    }
    this.expect(')', `) closing the arguments of ${t.text}`);
    return { k: 'call', name: t.text.toUpperCase(), args };
  }
}

function describe(t: Token): string {
  if (t.kind === 'end') return 'end of the expression';
  if (t.kind === 'string') return 'a string literal';
  return JSON.stringify(t.text);
}

/** The tree of `expression`; throws CesqlParseError with the position of the first problem. */
export function parseCesql(expression: string): Node {
  return new Parser(tokenize(expression)).parse();
}
