/**
 * Knative's revision garbage collection settings, from the `config-gc` ConfigMap in
 * `knative-serving` (its keys and defaults): `retain-since-create-time` 48h and
 * `retain-since-last-active-time` 15h (Go durations, or `disabled`), `min-non-active-revisions` 20,
 * `max-non-active-revisions` 1000 (or `disabled`). A value that does not parse keeps the default.
 */
import { GoDuration, goDurationMs } from '../registry/kinds/cron.js';

export const GcConfigMap = { namespace: 'knative-serving', name: 'config-gc' } as const;

export interface GcSettings {
  /** undefined: disabled. */
  retainSinceCreateMs?: number;
  retainSinceLastActiveMs?: number;
  minNonActive: number;
  maxNonActive?: number;
}

export const DefaultGc: GcSettings = { retainSinceCreateMs: 48 * 3600_000, retainSinceLastActiveMs: 15 * 3600_000, minNonActive: 20, maxNonActive: 1000 };

const duration = (v: string | undefined, fallback: number | undefined): number | undefined => {
  if (v === undefined) return fallback;
  if (v.trim().toLowerCase() === 'disabled') return undefined;
  return GoDuration.test(v.trim()) && !v.trim().startsWith('-') ? goDurationMs(v.trim()) : fallback;
};

const count = (v: string | undefined, fallback: number | undefined, disabling: boolean): number | undefined => {
  if (v === undefined) return fallback;
  if (disabling && v.trim().toLowerCase() === 'disabled') return undefined;
  return /^\d+$/.test(v.trim()) ? Number(v.trim()) : fallback;
};

export function gcSettings(data: Record<string, string> | undefined): GcSettings {
  const d = data ?? {};
  return {
    retainSinceCreateMs: duration(d['retain-since-create-time'], DefaultGc.retainSinceCreateMs),
    retainSinceLastActiveMs: duration(d['retain-since-last-active-time'], DefaultGc.retainSinceLastActiveMs),
    minNonActive: count(d['min-non-active-revisions'], DefaultGc.minNonActive, false)!,
    maxNonActive: count(d['max-non-active-revisions'], DefaultGc.maxNonActive, true),
  };
}
