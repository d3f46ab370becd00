/**
 * `pattern` as Kubernetes evaluates it: Go's regexp (RE2 syntax, unanchored search), not JavaScript's
 * RegExp, whose syntax and semantics differ (lookarounds, backreferences, `\d` over Unicode, `$`
 * before a final newline…). @bufbuild/re2 is an RE2 engine: a pattern Go rejects is rejected here with
 * the same message, and one Go accepts matches the same strings. Compiled once per pattern.
 */
import { RE2JS } from '@bufbuild/re2';

const compiled = new Map<string, RE2JS>();
const MaxCached = 4096;

/** The compile error Go's regexp.Compile gives (`error parsing regexp: missing closing ): ...`), or undefined. */
export const patternError = (pattern: string): string | undefined => {
  try {
    compile(pattern);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
};

const compile = (pattern: string): RE2JS => {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RE2JS(pattern);
    if (compiled.size < MaxCached) compiled.set(pattern, re);
  }
  return re;
};

/** regexp.MatchString: whether `value` contains a match (patterns that do not compile match nothing). */
export const matchesPattern = (pattern: string, value: string): boolean => {
  try {
    return compile(pattern).test(value);
  } catch {
    return false;
  }
};
