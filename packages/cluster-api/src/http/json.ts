/**
 * JSON as kube-apiserver writes it with Go's encoding/json: a compact document ends with the newline
 * json.Encoder adds, a pretty one is json.MarshalIndent (two spaces, no newline), and `<`, `>`, `&`,
 * U+2028 and U+2029 are escaped in strings (`\u003c`…) as Go's encoder escapes them. Clients and
 * tests compare these bytes (the Python client's error bodies, captured Status strings).
 */

const goEscaped = /[<>&\u2028\u2029]/;
const goEscapedAll = /[<>&\u2028\u2029]/g;
const escape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Outside strings JSON text holds none of these characters, so the whole text can be rewritten. */
export const goEscapes = (json: string): string => (goEscaped.test(json) ? json.replace(goEscapedAll, escape) : json);

/** json.NewEncoder(w).Encode(value), or json.MarshalIndent(value, "", "  ") when pretty. */
export const goJson = (value: unknown, pretty = false): string =>
  pretty ? goEscapes(JSON.stringify(value, null, 2)) : `${goEscapes(JSON.stringify(value))}\n`;

export const Newline = Buffer.from('\n');

/**
 * strconv.ParseBool, what kube-apiserver reads `pretty` with (an invalid value counts as false, never
 * a 400). Boolean parameters of the API's options are read otherwise: see query.ts `boolParam`.
 */
export function parseGoBool(value: string): boolean | undefined {
  switch (value) {
    case '1': case 't': case 'T': case 'TRUE': case 'true': case 'True':
      return true;
    case '0': case 'f': case 'F': case 'FALSE': case 'false': case 'False':
      return false;
    default:
      return undefined;
  }
}
