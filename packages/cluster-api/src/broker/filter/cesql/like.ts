/**
 * LIKE patterns (spec §3.4.3): `%` any run of characters, `_` one character, `\%` and `\_` those
 * characters literally; any other character, a backslash before anything else included, matches
 * itself, case-sensitively. Matched by the two-pointer wildcard algorithm (backtrack to the last `%`
 * only), so a pattern of many `%` costs O(pattern × value), never exponential time.
 */

type Part = { readonly any: 'one' | 'many' } | { readonly ch: string };

function compile(pattern: string): Part[] {
  const parts: Part[] = [];
  const c = [...pattern];
  for (let i = 0; i < c.length; i++) {
    const ch = c[i]!;
    if (ch === '\\' && (c[i + 1] === '%' || c[i + 1] === '_')) parts.push({ ch: c[++i]! });
    else if (ch === '%') parts.push({ any: 'many' });
    else if (ch === '_') parts.push({ any: 'one' });
    else parts.push({ ch });
  }
  return parts;
}

function matches(parts: readonly Part[], value: string): boolean {
  const v = [...value];
  let p = 0;
  let i = 0;
  let star = -1;
  let resume = 0;
  while (i < v.length) {
    const part = parts[p];
    if (part && ('ch' in part ? part.ch === v[i] : part.any === 'one')) {
      p++;
      i++;
    } else if (part && 'any' in part && part.any === 'many') {
      star = p++;
      resume = i;
    } else if (star >= 0) {
      p = star + 1;
      i = ++resume;
    } else return false;
  }
  while (p < parts.length && 'any' in parts[p]! && (parts[p] as { any: string }).any === 'many') p++;
  return p === parts.length;
}

const cache = new Map<string, (value: string) => boolean>();

/** A matcher for `pattern`, compiled once per distinct pattern. */
export function likeMatcher(pattern: string): (value: string) => boolean {
  let m = cache.get(pattern);
  if (!m) {
    const parts = compile(pattern);
    m = (value) => matches(parts, value);
    if (cache.size > 10_000) cache.clear();
    cache.set(pattern, m);
  }
  return m;
}
