/**
 * "Did you mean": the known word closest to a mistyped one, by edit distance (insertions, deletions,
 * substitutions and swaps of two neighbours each count one), when it is close enough to be the
 * likely intent: at most 1 edit for words of up to 4 letters, 2 for longer ones.
 */

/** Optimal string alignment distance: Levenshtein plus adjacent transpositions (`delpoy` → `deploy` is 1). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate closest to `word` (case-insensitive), or undefined when none is close enough. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  const limit = w.length <= 4 ? 1 : 2;
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(w, name.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** ` Did you mean "x"?`, or nothing. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates);
  return match === undefined ? '' : ` Did you mean "${match}"?`;
}
