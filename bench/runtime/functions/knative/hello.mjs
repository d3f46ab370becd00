// Runs unchanged on faas-js-runtime 4 and on func-runtime: the compatibility promise itself.
export function handle() {
  return 'Hello, world!';
}
