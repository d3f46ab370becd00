/**
 * When a CronJob schedule fires next (robfig/cron's SpecSchedule.Next), in a time zone: the wall
 * clock of the zone is searched field by field (month, day, hour, minute), jumping to the start of
 * the next unit on a mismatch, so a yearly schedule costs a few dozen steps. Day-of-month and
 * day-of-week combine with OR unless one of them is `*`. A wall time that a DST change skips is
 * taken at the next existing instant, as Go's time.Date normalises it.
 */
import type { CronSchedule } from '../../registry/kinds/cron.js';

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const formatter = (zone: string): Intl.DateTimeFormat => {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', weekday: 'short' });
    formatters.set(zone, f);
  }
  return f;
};

const Weekdays: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

const wallAt = (ms: number, zone: string): Wall => {
  const parts = Object.fromEntries(formatter(zone).formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour), minute: Number(parts.minute), weekday: Weekdays[parts.weekday!] ?? 0 };
};

/** The instant of a wall time in `zone` (the offset read at the guess, then checked once more). */
const instantOf = (w: Omit<Wall, 'weekday'>, zone: string): number => {
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
  const offsetAt = (ms: number) => {
    const x = wallAt(ms, zone);
    return Date.UTC(x.year, x.month - 1, x.day, x.hour, x.minute) - Math.floor(ms / 60_000) * 60_000;
  };
  return asUtc - offsetAt(asUtc - offsetAt(asUtc));
};

const dayMatches = (s: Exclude<CronSchedule, { every: number }>, w: Wall): boolean => {
  const dom = s.days.has(w.day);
  const dow = s.weekdays.has(w.weekday);
  return s.anyDay || s.anyWeekday ? dom && dow : dom || dow;
};

/** The first time after `afterMs` the schedule fires (ms), or undefined within five years. */
export const nextFire = (schedule: CronSchedule, afterMs: number, zone: string): number | undefined => {
  if (schedule.every !== undefined) return Math.floor(afterMs / 1000) * 1000 + schedule.every;
  const s = schedule;
  let t = Math.floor(afterMs / 60_000) * 60_000 + 60_000;
  const limit = afterMs + 5 * 366 * 86_400_000;
  while (t <= limit) {
    const w = wallAt(t, zone);
    if (!s.months.has(w.month)) {
      t = instantOf({ year: w.month === 12 ? w.year + 1 : w.year, month: (w.month % 12) + 1, day: 1, hour: 0, minute: 0 }, zone);
      continue;
    }
    if (!dayMatches(s, w)) {
      t = instantOf({ ...w, day: w.day + 1, hour: 0, minute: 0 }, zone);
      continue;
    }
    if (!s.hours.has(w.hour)) {
      t = instantOf({ ...w, hour: w.hour + 1, minute: 0 }, zone);
      continue;
    }
    if (!s.minutes.has(w.minute)) {
      t += 60_000;
      continue;
    }
    return t;
  }
  return undefined;
};

/** Whether Node knows the zone (as time.LoadLocation would). */
export const knownZone = (zone: string): boolean => {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
};

/** The zone a CronJob's schedule runs in: its timeZone, else this process's (kube-controller-manager's time.Local). */
export const zoneOf = (timeZone: unknown): string => (typeof timeZone === 'string' && timeZone ? timeZone : Intl.DateTimeFormat().resolvedOptions().timeZone);

/** Go's time.Format(time.RFC3339) of an instant in a zone: `2024-03-01T10:00:00+01:00`, `Z` at offset zero. */
export const rfc3339In = (ms: number, zone: string): string => {
  const w = wallAt(ms, zone);
  const local = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, new Date(ms).getUTCSeconds());
  const offset = Math.round((local - Math.floor(ms / 1000) * 1000) / 60_000);
  const pad = (n: number) => String(n).padStart(2, '0');
  const zoneText = offset === 0 ? 'Z' : `${offset > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return `${new Date(local).toISOString().slice(0, 19)}${zoneText}`;
};
