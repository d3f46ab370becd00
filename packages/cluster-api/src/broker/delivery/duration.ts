/**
 * ISO 8601 durations as Knative's DeliverySpec uses them (`PT0.2S`, `PT1M`, `P1DT2H`). Knative parses
 * them with rickb777/date's `period.Parse`; this accepts the same designators (Y M W D, then T H M S),
 * a decimal fraction (`.` or `,`) on any of them, and counts a year as 365 days and a month as 30,
 * which is what a duration without a start date can mean.
 */

const UNIT_MS = {
  Y: 365 * 86_400_000,
  MD: 30 * 86_400_000,
  W: 7 * 86_400_000,
  D: 86_400_000,
  H: 3_600_000,
  MT: 60_000,
  S: 1_000,
} as const;

const PATTERN =
  /^P(?:(\d+(?:[.,]\d+)?)Y)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;

/** Milliseconds of an ISO 8601 duration, or undefined when `text` is not one. Negative durations are refused. */
export function parseIsoDuration(text: string): number | undefined {
  const m = PATTERN.exec(text);
  // "P" and "PT" alone match the pattern but name no amount: period.Parse refuses them too.
  if (!m || text === 'P' || text.endsWith('T')) return undefined;
  const parts = [m[1], m[2], m[3], m[4], m[5], m[6], m[7]];
  if (parts.every((p) => p === undefined)) return undefined;
  const units = [UNIT_MS.Y, UNIT_MS.MD, UNIT_MS.W, UNIT_MS.D, UNIT_MS.H, UNIT_MS.MT, UNIT_MS.S];
  let ms = 0;
  parts.forEach((p, i) => {
    if (p !== undefined) ms += Number(p.replace(',', '.')) * units[i]!;
  });
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}
