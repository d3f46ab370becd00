/**
 * `--controllers`, as kube-controller-manager reads it: `*` is every controller on by default, `foo`
 * turns foo on, `-foo` turns it off, and the first word naming a controller decides. Names and
 * aliases are the descriptors' (descriptors.ts); the API server's own loops are not named.
 */
import { Controllers, type ControllerDescriptor } from './descriptors.js';

type List = readonly ControllerDescriptor[];

const named = (list: List) => list.filter((c) => !c.apiServer);

/** The canonical name a word names, or undefined. */
const canonical = (word: string, list: List): string | undefined => named(list).find((c) => c.name === word || c.aliases.includes(word))?.name;

/** The words of a `--controllers` value that name no controller (empty when all are known). */
export const unknownControllers = (words: readonly string[], list: List = Controllers): string[] =>
  words.filter((w) => w !== '*' && canonical(w.startsWith('-') ? w.slice(1) : w, list) === undefined);

/** IsControllerEnabled: the first word naming the controller decides; else `*` turns on those on by default. */
export const isEnabled = (name: string, words: readonly string[], list: List = Controllers): boolean => {
  let star = false;
  for (const w of words) {
    if (w === '*') star = true;
    else if (canonical(w, list) === name) return true;
    else if (w.startsWith('-') && canonical(w.slice(1), list) === name) return false;
  }
  return star && named(list).find((c) => c.name === name)?.byDefault === true;
};
