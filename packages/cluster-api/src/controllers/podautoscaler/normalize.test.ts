/** Stabilization and rate limits of the autoscaler, over a history built here and given times (no clock). */
import { describe, expect, it } from 'vitest';
import { newHistory, normalize, normalizeWithBehavior, recordScale, scaleDownLimit } from './normalize.js';

const t0 = 1_000_000_000;

describe('normalize (no behavior)', () => {
  it('applies the highest recommendation of the downscale window (5 min by default)', () => {
    const h = newHistory();
    expect(normalize(h, { current: 5, desired: 5, min: 1, max: 10, now: t0 }).replicas).toBe(5);
    const held = normalize(h, { current: 5, desired: 2, min: 1, max: 10, now: t0 + 60_000 });
    expect(held).toMatchObject({ replicas: 5, ableToScale: { reason: 'ScaleDownStabilized' }, scalingLimited: { status: 'False', reason: 'DesiredWithinRange' } });
    expect(normalize(h, { current: 5, desired: 2, min: 1, max: 10, now: t0 + 301_000 })).toMatchObject({ replicas: 2, ableToScale: { reason: 'ReadyForNewScale' } });
  });

  it('limits a scale-up to max(2 × current, 4), and to maxReplicas and minReplicas', () => {
    expect(normalize(newHistory(), { current: 1, desired: 10, min: 1, max: 20, now: t0 })).toMatchObject({ replicas: 4, scalingLimited: { status: 'True', reason: 'ScaleUpLimit' } });
    expect(normalize(newHistory(), { current: 1, desired: 10, min: 1, max: 3, now: t0 })).toMatchObject({ replicas: 3, scalingLimited: { status: 'True', reason: 'TooManyReplicas' } });
    expect(normalize(newHistory(), { current: 3, desired: 1, min: 2, max: 5, now: t0 })).toMatchObject({ replicas: 2, scalingLimited: { status: 'True', reason: 'TooFewReplicas' } });
  });
});

describe('normalizeWithBehavior', () => {
  it('limits a scale-up by the default policies (4 pods or 100 % per 15 s, the larger) over recent scale events', () => {
    const h = newHistory();
    const behavior = { scaleDown: { stabilizationWindowSeconds: 0 } };
    const first = normalizeWithBehavior(h, { current: 2, desired: 20, min: 1, max: 100, now: t0 }, behavior);
    expect(first).toMatchObject({ replicas: 6, scalingLimited: { status: 'True', reason: 'ScaleUpLimit' } });
    recordScale(h, behavior, 2, 6, t0);
    // Within the period the 4 pods added count: the limit is what it was at the period's start.
    expect(normalizeWithBehavior(h, { current: 6, desired: 20, min: 1, max: 100, now: t0 + 5000 }, behavior).replicas).toBe(6);
    // After it: 100 % of 6.
    expect(normalizeWithBehavior(h, { current: 6, desired: 20, min: 1, max: 100, now: t0 + 16_000 }, behavior).replicas).toBe(12);
  });

  it('holds a scale-down for the scale-down window (the controller\'s 5 min when the spec names none)', () => {
    const h = newHistory();
    h.recommendations.push({ at: t0, value: 6 });
    expect(normalizeWithBehavior(h, { current: 6, desired: 1, min: 1, max: 10, now: t0 + 60_000 }, {})).toMatchObject({ replicas: 6, ableToScale: { reason: 'ScaleDownStabilized' } });
    const short = newHistory();
    short.recommendations.push({ at: t0, value: 6 });
    expect(normalizeWithBehavior(short, { current: 6, desired: 1, min: 1, max: 10, now: t0 + 60_000 }, { scaleDown: { stabilizationWindowSeconds: 30 } }).replicas).toBe(1);
  });

  it('holds a scale-up for a scale-up window', () => {
    const h = newHistory();
    h.recommendations.push({ at: t0, value: 2 });
    const r = normalizeWithBehavior(h, { current: 2, desired: 5, min: 1, max: 10, now: t0 + 10_000 }, { scaleUp: { stabilizationWindowSeconds: 60 } });
    expect(r).toMatchObject({ replicas: 2, ableToScale: { reason: 'ScaleUpStabilized' } });
  });

  it('rate-limits a scale-down by its policies; Disabled keeps the count', () => {
    const half = { scaleDown: { stabilizationWindowSeconds: 0, policies: [{ type: 'Percent', value: 50, periodSeconds: 60 }] } };
    expect(normalizeWithBehavior(newHistory(), { current: 10, desired: 1, min: 1, max: 10, now: t0 }, half)).toMatchObject({ replicas: 5, scalingLimited: { status: 'True', reason: 'ScaleDownLimit' } });
    const off = { scaleDown: { stabilizationWindowSeconds: 0, selectPolicy: 'Disabled' } };
    expect(normalizeWithBehavior(newHistory(), { current: 10, desired: 1, min: 1, max: 10, now: t0 }, off).replicas).toBe(10);
    // Min picks the policy allowing the smaller change.
    const rules = { selectPolicy: 'Min', policies: [{ type: 'Pods', value: 1, periodSeconds: 60 }, { type: 'Percent', value: 50, periodSeconds: 60 }] };
    expect(scaleDownLimit(10, [], rules, t0)).toBe(9);
  });
});
