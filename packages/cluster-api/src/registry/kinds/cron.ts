/**
 * CronJob schedules as Kubernetes parses them (robfig/cron v3's standard parser: five fields,
 * `@hourly`-style descriptors, `@every <duration>`), returning its error text: a CronJob with a bad
 * schedule is a 422 whose cause quotes it, as kube-apiserver answers. Only parsing lives here; when a
 * schedule fires is the CronJob controller's business.
 */

interface Bounds {
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const Months = { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 };
const Days = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const Fields: readonly Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: Months },
  { min: 0, max: 6, names: Days },
];

const Descriptors = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Go's strconv.Atoi error, as robfig/cron wraps it. */
const atoi = (text: string, names?: Readonly<Record<string, number>>): number => {
  const named = names?.[text.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^[+-]?\d+$/.test(text)) throw new Error(`failed to parse int from ${text}: strconv.Atoi: parsing ${JSON.stringify(text)}: invalid syntax`);
  const n = Number(text);
  if (n < 0) throw new Error(`negative number (${n}) not allowed: ${text}`);
  return n;
};

/** One comma-separated part of a field: `*`, `?`, `a`, `a-b`, each with an optional `/step`. */
const checkRange = (expr: string, b: Bounds): void => {
  const [rangePart = '', ...steps] = expr.split('/');
  if (steps.length > 1) throw new Error(`too many slashes: ${expr}`);
  const bounds = rangePart.split('-');
  if (bounds.length > 2) throw new Error(`too many hyphens: ${expr}`);
  let start: number;
  let end: number;
  if (rangePart === '*' || rangePart === '?') [start, end] = [b.min, b.max];
  else {
    start = atoi(bounds[0]!, b.names);
    end = bounds.length === 2 ? atoi(bounds[1]!, b.names) : start;
  }
  if (steps.length === 1) {
    const step = atoi(steps[0]!);
    if (step <= 0) throw new Error(`step of range should be a positive number: ${expr}`);
  }
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
};

/** Go's time.ParseDuration grammar, for `@every`. */
const GoDuration = /^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;

/** The parser's error for `schedule`, or undefined when it parses. */
export const cronError = (schedule: string): string | undefined => {
  try {
    parse(schedule);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

const parse = (schedule: string): void => {
  const spec = schedule.trim();
  if (spec === '') throw new Error('empty spec string');
  if (spec.startsWith('@')) {
    if (spec.startsWith('@every ')) {
      const d = spec.slice('@every '.length).trim();
      if (!GoDuration.test(d) || d === '0') throw new Error(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(d)}`);
      return;
    }
    if (!Descriptors.has(spec)) throw new Error(`unrecognized descriptor: ${spec}`);
    return;
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  fields.forEach((field, i) => field.split(',').forEach((part) => checkRange(part, Fields[i]!)));
};
