/**
 * CESQL v1 tokens (CloudEvents SQL, cesql/spec.md §2). Keywords and function names are
 * case-insensitive; value identifiers are attribute names. String literals are `'…'` or `"…"`, where
 * only the delimiting quote is escaped (`\'`, `\"`): any other backslash stays, as the LIKE escapes
 * `\%` and `\_` need it to.
 */

export type TokenKind = 'int' | 'string' | 'ident' | 'keyword' | 'op' | '(' | ')' | ',' | 'end';

export interface Token {
  readonly kind: TokenKind;
  /** Keywords upper-cased; identifiers as written; string literals unescaped; integers as digits. */
  readonly text: string;
  readonly pos: number;
}

export const KEYWORDS = new Set(['AND', 'OR', 'XOR', 'NOT', 'LIKE', 'IN', 'EXISTS', 'TRUE', 'FALSE']);

/** A parse error: the only kind of CESQL error raised at compile time. */
export class CesqlParseError extends Error {
  constructor(
    message: string,
    readonly pos: number,
  ) {
    super(`parse error at position ${pos + 1}: ${message}`);
  }
}

const OPERATORS = ['!=', '<>', '>=', '<=', '=', '<', '>', '+', '-', '*', '/', '%'];

function readString(src: string, start: number): { text: string; end: number } {
  const quote = src[start]!;
  let text = '';
  for (let i = start + 1; i < src.length; i++) {
    const ch = src[i]!;
    if (ch === '\\' && src[i + 1] === quote) {
      text += quote;
      i++;
    } else if (ch === quote) return { text, end: i + 1 };
    else text += ch;
  }
  throw new CesqlParseError('unterminated string literal', start);
}

function readWord(src: string, start: number): number {
  let i = start;
  while (i < src.length && /[A-Za-z0-9_]/.test(src[i]!)) i++;
  return i;
}

export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (ch === "'" || ch === '"') {
      const s = readString(src, i);
      tokens.push({ kind: 'string', text: s.text, pos: i });
      i = s.end;
    } else if (/[A-Za-z0-9]/.test(ch)) {
      // Attribute names may start with a digit: only an all-digit word is a number.
      const end = readWord(src, i);
      const text = src.slice(i, end);
      const upper = text.toUpperCase();
      if (/^[0-9]+$/.test(text)) tokens.push({ kind: 'int', text, pos: i });
      else tokens.push(KEYWORDS.has(upper) ? { kind: 'keyword', text: upper, pos: i } : { kind: 'ident', text, pos: i });
      i = end;
    } else if (ch === '(' || ch === ')' || ch === ',') {
      tokens.push({ kind: ch, text: ch, pos: i });
      i++;
    } else {
      const op = OPERATORS.find((o) => src.startsWith(o, i));
      if (!op) throw new CesqlParseError(`unexpected character ${JSON.stringify(ch)}`, i);
      tokens.push({ kind: 'op', text: op, pos: i });
      i += op.length;
    }
  }
  tokens.push({ kind: 'end', text: '', pos: src.length });
  return tokens;
}
