/**
 * A function's name becomes a Kubernetes Service name, an npm package name and a directory name,
 * so it must be a DNS-1123 label — the rule Knative Functions applies too.
 */
const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
export const maxNameLength = 63;

/** Returns why `name` is not a valid function name, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  if (name === '') return 'the name is empty';
  if (name.length > maxNameLength) return `the name is ${name.length} characters long; at most ${maxNameLength} are allowed`;
  if (!dnsLabel.test(name)) {
    return (
      `"${name}" is not a valid function name: use lower-case letters, digits and "-", ` +
      'starting and ending with a letter or digit (a DNS-1123 label, e.g. "my-function")'
    );
  }
  return undefined;
}

/** A name suggested from a directory name: `My_Function` → `my-function`; undefined if nothing is left. */
export function suggestName(dirName: string): string | undefined {
  const candidate = dirName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxNameLength)
    .replace(/-+$/, '');
  return candidate === '' ? undefined : candidate;
}
