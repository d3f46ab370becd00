/**
 * The Prometheus text exposition format (0.0.4) as a scraper reads it: one sample per line,
 * `name{label="value",…} value [timestamp-ms]`, comments and blank lines skipped. A line that is
 * none of these makes the whole scrape malformed (metrics-server drops such a node's scrape too).
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Milliseconds since the epoch, when the line has one. */
  timestamp?: number;
}

export class MalformedMetrics extends Error {
  override readonly name = 'MalformedMetrics';
}

const Name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LabelName = /^[a-zA-Z_][a-zA-Z0-9_]*/;

const number = (text: string, line: number): number => {
  const v = text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : text === 'NaN' ? NaN : Number(text);
  if (text === '' || (Number.isNaN(v) && text !== 'NaN')) throw new MalformedMetrics(`line ${line}: not a number`);
  return v;
};

/** `{a="x",b="y"}` from `at` (the opening brace): the labels and the index after the closing brace. */
const readLabels = (s: string, at: number, line: number): [Record<string, string>, number] => {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    while (s[i] === ' ' || s[i] === ',') i++;
    if (s[i] === '}') return [labels, i + 1];
    const name = LabelName.exec(s.slice(i))?.[0];
    if (!name || s[i + name.length] !== '=' || s[i + name.length + 1] !== '"') throw new MalformedMetrics(`line ${line}: bad label`);
    i += name.length + 2;
    let value = '';
    for (;;) {
      const c = s[i];
      if (c === undefined) throw new MalformedMetrics(`line ${line}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const n = s[i + 1];
        value += n === 'n' ? '\n' : n ?? '';
        i += 2;
      } else (value += c), i++;
    }
    labels[name] = value;
    i++;
  }
};

export function parseMetricsText(text: string): Sample[] {
  const out: Sample[] = [];
  text.split('\n').forEach((raw, index) => {
    const s = raw.trim();
    if (s === '' || s.startsWith('#')) return;
    const line = index + 1;
    const name = Name.exec(s)?.[0];
    if (!name) throw new MalformedMetrics(`line ${line}: no metric name`);
    let labels: Record<string, string> = {};
    let i = name.length;
    if (s[i] === '{') [labels, i] = readLabels(s, i, line);
    const rest = s.slice(i).trim().split(/\s+/);
    if (rest.length < 1 || rest.length > 2 || rest[0] === '') throw new MalformedMetrics(`line ${line}: expected a value and an optional timestamp`);
    const timestamp = rest[1] === undefined ? undefined : number(rest[1], line);
    if (timestamp !== undefined && !Number.isInteger(timestamp)) throw new MalformedMetrics(`line ${line}: bad timestamp`);
    out.push({ name, labels, value: number(rest[0]!, line), ...(timestamp !== undefined && { timestamp }) });
  });
  return out;
}
