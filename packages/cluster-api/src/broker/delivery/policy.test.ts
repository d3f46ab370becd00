import { describe, expect, it } from 'vitest';
import { parseIsoDuration } from './duration.js';
import { backoffMs, DEFAULT_TIMEOUT_MS, deliveryPolicy, deliveryProblems } from './policy.js';

describe('ISO 8601 durations', () => {
  it.each([
    ['PT0.2S', 200],
    ['PT1S', 1000],
    ['PT1,5S', 1500],
    ['PT2M', 120_000],
    ['PT1H30M', 5_400_000],
    ['P1D', 86_400_000],
    ['P1W', 604_800_000],
    ['P1DT1S', 86_401_000],
    ['PT0S', 0],
  ])('%s = %d ms', (text, ms) => {
    expect(parseIsoDuration(text)).toBe(ms);
  });

  it.each(['', 'P', 'PT', '1S', 'PT-1S', 'PT1', 'T1S', 'PT1S2M', '5s', 'P1.5.2D', 'PT 1S'])('%j is refused', (text) => {
    expect(parseIsoDuration(text)).toBeUndefined();
  });
});

describe('delivery policy', () => {
  it("takes the Trigger's DeliverySpec whole, else the Broker's, else Knative's default", () => {
    expect(deliveryPolicy({ retry: 2 }, { retry: 7, backoffPolicy: 'linear' })).toMatchObject({ retry: 2, policy: 'exponential', delayMs: 200 });
    expect(deliveryPolicy(undefined, { retry: 7, backoffPolicy: 'linear', backoffDelay: 'PT1S' })).toMatchObject({ retry: 7, policy: 'linear', delayMs: 1000 });
    expect(deliveryPolicy(undefined, undefined)).toMatchObject({ retry: 10, policy: 'exponential', delayMs: 200, timeoutMs: DEFAULT_TIMEOUT_MS });
  });

  it("falls back to the Broker's dead-letter sink field by field", () => {
    const p = deliveryPolicy({ retry: 1 }, { deadLetterSink: { uri: 'http://dls/' } });
    expect(p.deadLetterSink).toEqual({ uri: 'http://dls/' });
  });

  it('backs off linearly or exponentially by retry number, capped', () => {
    const linear = deliveryPolicy({ backoffPolicy: 'linear', backoffDelay: 'PT0.1S' }, undefined);
    const exp = deliveryPolicy({ backoffPolicy: 'exponential', backoffDelay: 'PT0.1S' }, undefined);
    expect([1, 2, 3].map((n) => backoffMs(linear, n))).toEqual([100, 200, 300]);
    expect([1, 2, 3].map((n) => backoffMs(exp, n))).toEqual([200, 400, 800]);
    expect(backoffMs(exp, 60)).toBe(3_600_000);
  });

  it('names each bad field as Knative does', () => {
    const problems = deliveryProblems(
      { retry: -1, backoffPolicy: 'fibonacci', backoffDelay: '5s', timeout: 'PT0S', deadLetterSink: {} },
      'spec.delivery',
    );
    expect(problems.map((p) => p.path)).toEqual([
      'spec.delivery.deadLetterSink',
      'spec.delivery.retry',
      'spec.delivery.backoffPolicy',
      'spec.delivery.backoffDelay',
      'spec.delivery.timeout',
    ]);
    expect(problems[3]!.message).toContain('ISO 8601');
    expect(deliveryProblems({ retry: 3, backoffDelay: 'PT1S', backoffPolicy: 'linear', timeout: 'PT5S' }, 'spec.delivery')).toEqual([]);
  });
});
