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

/** One comma-separated part of a field: `*`, `?`, `a`, `a-b`, each with an optional `/step`; the values it allows. */
const checkRange = (expr: string, b: Bounds): number[] => {
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
  let step = 1;
  if (steps.length === 1) {
    step = atoi(steps[0]!);
    if (step <= 0) throw new Error(`step of range should be a positive number: ${expr}`);
    // robfig/cron: "N/step" means "N-max/step".
    if (bounds.length === 1 && rangePart !== '*' && rangePart !== '?') end = b.max;
  }
  if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  const values: number[] = [];
  for (let v = start; v <= end; v += step) values.push(v);
  return values;
};

/**
 * A parsed schedule: the values each of the five fields allows (and whether day-of-month and
 * day-of-week were `*`, which decides how they combine), or a fixed interval (`@every`).
 */
export type CronSchedule =
  | { every?: undefined; minutes: Set<number>; hours: Set<number>; days: Set<number>; months: Set<number>; weekdays: Set<number>; anyDay: boolean; anyWeekday: boolean }
  | { every: number };

const DescriptorFields: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *', '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0', '@daily': '0 0 * * *', '@midnight': '0 0 * * *', '@hourly': '0 * * * *',
};

const GoUnits: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Go's time.ParseDuration, in milliseconds (the grammar is checked first). */
export const goDurationMs = (d: string): number => {
  let total = 0;
  for (const m of d.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) total += Number(m[1]) * GoUnits[m[2]!]!;
  return d.startsWith('-') ? -total : total;
};

/** The schedule robfig/cron's standard parser makes of `schedule` (which must parse: see cronError). */
export const parseSchedule = (schedule: string): CronSchedule => parse(schedule);

/** Go's time.ParseDuration grammar, for `@every`. */
export const GoDuration = /^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;

/** The parser's error for `schedule`, or undefined when it parses. */
export const cronError = (schedule: string): string | undefined => {
  try {
    parse(schedule);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

const parse = (schedule: string): CronSchedule => {
  const spec = schedule.trim();
  if (spec === '') throw new Error('empty spec string');
  if (spec.startsWith('@')) {
    if (spec.startsWith('@every ')) {
      const d = spec.slice('@every '.length).trim();
      if (!GoDuration.test(d) || d === '0') throw new Error(`failed to parse duration ${spec}: time: invalid duration ${JSON.stringify(d)}`);
      // robfig/cron's Every: whole seconds, at least one.
      return { every: Math.max(1000, Math.floor(goDurationMs(d) / 1000) * 1000) };
    }
    if (!Descriptors.has(spec)) throw new Error(`unrecognized descriptor: ${spec}`);
    return parse(DescriptorFields[spec]!);
  }
  const fields = spec.split(/\s+/);
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minutes, hours, days, months, weekdays] = fields.map((field, i) => new Set(field.split(',').flatMap((part) => checkRange(part, Fields[i]!)))) as Set<number>[];
  // robfig/cron's starBit: a bare `*` or `?` (a step other than 1 clears it).
  const star = (f: string) => f === '*' || f === '?' || f === '*/1';
  return { minutes: minutes!, hours: hours!, days: days!, months: months!, weekdays: weekdays!, anyDay: star(fields[2]!), anyWeekday: star(fields[4]!) };
};
