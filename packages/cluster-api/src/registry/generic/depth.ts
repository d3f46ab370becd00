/**
 * How deep an object may nest. Go's JSON decoder in kube-apiserver stops at 10,000 levels; here the
 * recursive work that follows a decode (defaulting, patches, managed fields, the YAML encoder, which
 * exhausts the stack between 600 and 800 levels and can then abort the process in V8's regexp
 * compiler) sets the bound: 256 levels, far beyond any real object (a CRD's schema nests a few dozen),
 * checked before any of that work runs, on every body and every patched object.
 */
import { ApiError } from '../../api/errors.js';

export const MaxNestingDepth = 256;

/** Whether `value` nests arrays and objects deeper than `limit` (a scalar is depth 0, `{}` depth 1). Iterative: no stack to exhaust, cycles included. */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop();
    const depth = depths.pop()!;
    if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) continue;
    if (depth > limit) return true;
    const children: unknown[] = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      if (typeof child === 'object' && child !== null) (stack.push(child), depths.push(depth + 1));
    }
  }
  return false;
}

/** 400, as Kubernetes refuses input its decoder cannot take: nothing of the body is processed further. */
export const tooDeep = (): ApiError =>
  new ApiError(400, 'BadRequest', `the object provided is unrecognized or malformed: exceeded max depth of ${MaxNestingDepth}`);

export function checkDepth(value: unknown): void {
  if (nestsDeeperThan(value, MaxNestingDepth)) throw tooDeep();
}

/**
 * An upper bound of a YAML document's nesting, read from its text before any parser runs (the
 * parser itself recurses). Per line: each open indentation level (a stack of widths) holds at most
 * two levels (a mapping and a sequence written at its key's indentation), each block indicator
 * (`- `, `? `) opening the line one more, and each open flow bracket one; flow brackets count
 * twice, as the parser spends the most stack on them.
 */
export function yamlDepthBound(text: string): number {
  const indents: number[] = [];
  let max = 0;
  let flow = 0;
  for (const line of text.split('\n')) {
    let i = 0;
    while (line.charCodeAt(i) === 0x20) i++;
    const first = line.charCodeAt(i);
    if (Number.isNaN(first) || first === 0x23 || first === 0x0d) continue;
    while (indents.length > 0 && indents[indents.length - 1]! >= i) indents.pop();
    indents.push(i);
    let indicators = 0;
    while ((line.charCodeAt(i) === 0x2d || line.charCodeAt(i) === 0x3f) && line.charCodeAt(i + 1) === 0x20) {
      indicators++;
      i += 2;
      while (line.charCodeAt(i) === 0x20) i++;
    }
    const block = 2 * indents.length + indicators + 1;
    for (; i < line.length; i++) {
      const c = line.charCodeAt(i);
      if (c === 0x5b || c === 0x7b) max = Math.max(max, block + 2 * ++flow);
      else if ((c === 0x5d || c === 0x7d) && flow > 0) flow--;
    }
    max = Math.max(max, block + 2 * flow);
  }
  return max;
}

/** YAML whose bound passes this is parsed, then held to MaxNestingDepth like any body. */
export const MaxYamlDepthBound = 2 * MaxNestingDepth;
