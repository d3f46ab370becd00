/**
 * `--controllers`, as kube-controller-manager reads it: `*` is every controller on by default, `foo`
 * turns foo on, `-foo` turns it off, and the first word naming a controller decides. Names and
 * aliases are the descriptors' (descriptors.ts); the API server's own loops are not named.
 */
import { Controllers } from './descriptors.js';

const named = () => Controllers.filter((c) => !c.apiServer);

/** The canonical name a word names, or undefined. */
const canonical = (word: string): string | undefined => named().find((c) => c.name === word || c.aliases.includes(word))?.name;

/** The words of a `--controllers` value that name no controller (empty when all are known). */
export const unknownControllers = (words: readonly string[]): string[] =>
  words.filter((w) => w !== '*' && canonical(w.startsWith('-') ? w.slice(1) : w) === undefined);

/** IsControllerEnabled: the first word naming the controller decides; else `*` turns on those on by default. */
export const isEnabled = (name: string, words: readonly string[]): boolean => {
  let star = false;
  for (const w of words) {
    if (w === '*') star = true;
    else if (canonical(w) === name) return true;
    else if (w.startsWith('-') && canonical(w.slice(1)) === name) return false;
  }
  return star && named().find((c) => c.name === name)?.byDefault === true;
};
