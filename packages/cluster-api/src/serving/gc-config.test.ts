import { describe, expect, it } from 'vitest';
import { DefaultGc, gcSettings } from './gc-config.js';
import { untilStale } from '../controllers/serving-gc/gc.js';

const rev = (created: string, modified?: string) => ({
  apiVersion: 'serving.knative.dev/v1', kind: 'Revision',
  metadata: { name: 'r', creationTimestamp: created, ...(modified && { annotations: { 'serving.knative.dev/routingStateModified': modified } }) },
});

describe('revision GC settings (config-gc)', () => {
  it('defaults to Knative\'s: 48h, 15h, 20, 1000', () => {
    expect(gcSettings(undefined)).toEqual({ retainSinceCreateMs: 48 * 3600_000, retainSinceLastActiveMs: 15 * 3600_000, minNonActive: 20, maxNonActive: 1000 });
  });

  it('reads Go durations, counts and `disabled`', () => {
    expect(gcSettings({ 'retain-since-create-time': '1h30m', 'retain-since-last-active-time': 'disabled', 'min-non-active-revisions': '2', 'max-non-active-revisions': 'disabled' }))
      .toEqual({ retainSinceCreateMs: 90 * 60_000, retainSinceLastActiveMs: undefined, minNonActive: 2, maxNonActive: undefined });
  });

  it('keeps the default for a value that does not parse', () => {
    expect(gcSettings({ 'retain-since-create-time': 'two days', 'retain-since-last-active-time': '-1h', 'min-non-active-revisions': 'disabled', 'max-non-active-revisions': '-3' })).toEqual(DefaultGc);
  });

  it('counts staleness from creation and from the last change of routing state', () => {
    const now = Date.parse('2026-01-03T00:00:00Z');
    const gc = gcSettings({ 'retain-since-create-time': '48h', 'retain-since-last-active-time': '15h' });
    expect(untilStale(rev('2026-01-01T00:00:00Z'), gc, now)).toBe(0);
    expect(untilStale(rev('2026-01-01T00:00:00Z', '2026-01-02T20:00:00Z'), gc, now)).toBe(11 * 3600_000);
    expect(untilStale(rev('2026-01-02T00:00:00Z'), gc, now)).toBe(24 * 3600_000);
    expect(untilStale(rev('2026-01-01T00:00:00Z'), gcSettings({ 'retain-since-create-time': 'disabled', 'retain-since-last-active-time': 'disabled' }), now)).toBeUndefined();
  });
});
