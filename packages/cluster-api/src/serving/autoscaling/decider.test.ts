import { describe, expect, it } from 'vitest';
import { autoscalerConfig, DefaultAutoscalerConfig, scalingSpec, type ScalingSpec } from './config.js';
import { Decider, excessBurstCapacity } from './decider.js';
import { BurstModeAnnotation, burstMode, gatewayPodCapacity, modeOf } from './burst-mode.js';

const spec = (annotations: Record<string, string> = {}, cc?: number, data?: Record<string, string>): ScalingSpec =>
  scalingSpec(Object.fromEntries(Object.entries(annotations).map(([k, v]) => [`autoscaling.knative.dev/${k}`, v])), cc, autoscalerConfig(data).value).value;

/** Feeds `value` for each second in [from, to) and decides each second, as the controller's tick does; the last decision. */
function run(d: Decider, from: number, to: number, value: number, ready: () => number, current: { n: number }) {
  let last;
  for (let t = from; t < to; t += 1000) {
    d.record(t, value);
    last = d.decide(t, ready(), current.n);
    current.n = last.desired;
  }
  return last!;
}

describe('config-autoscaler and the revision annotations', () => {
  it('has Knative defaults', () => {
    expect(autoscalerConfig(undefined)).toEqual({ value: DefaultAutoscalerConfig, invalid: [] });
    const s = spec();
    expect(s).toMatchObject({ class: 'kpa.autoscaling.knative.dev', metric: 'concurrency', totalValue: 100, stableWindowMs: 60_000, panicWindowMs: 6000, panicThreshold: 2, minScale: 0, maxScale: 0, initialScale: 1, activationScale: 1, targetBurstCapacity: 211 });
    expect(s.targetValue).toBeCloseTo(70);
  });

  it('reads the ConfigMap and the annotations; containerConcurrency caps the target', () => {
    const c = autoscalerConfig({ 'stable-window': '20s', 'container-concurrency-target-percentage': '50', 'scale-to-zero-grace-period': '6s', 'enable-scale-to-zero': 'false' });
    expect(c.invalid).toEqual([]);
    expect(c.value).toMatchObject({ stableWindowMs: 20_000, targetUtilization: 0.5, scaleToZeroGracePeriodMs: 6000, enableScaleToZero: false });
    const s = spec({ window: '6s', 'min-scale': '0', 'max-scale': '3', target: '10', 'scale-down-delay': '2s', 'activation-scale': '2', metric: 'rps' }, 1);
    expect(s).toMatchObject({ stableWindowMs: 6000, panicWindowMs: 1000, maxScale: 3, totalValue: 10, metric: 'rps', scaleDownDelayMs: 2000, activationScale: 2 });
    expect(spec({}, 1).totalValue).toBe(1);
    expect(spec({ target: '50' }, 5).totalValue).toBe(5);
  });

  it('refuses malformed and out-of-range values, keeping the default and naming them', () => {
    const c = autoscalerConfig({ 'stable-window': '5s', 'max-scale-up-rate': 'fast', 'panic-threshold-percentage': '50', 'initial-scale': '0' });
    expect(c.value.stableWindowMs).toBe(60_000);
    expect(c.value.maxScaleUpRate).toBe(1000);
    expect(c.invalid).toEqual(['stable-window: "5s"', 'panic-threshold-percentage: "50"', 'max-scale-up-rate: "fast"', 'initial-scale: "0" (allow-zero-initial-scale is false)']);
    const r = scalingSpec({ 'autoscaling.knative.dev/window': '2h', 'autoscaling.knative.dev/min-scale': '-1', 'autoscaling.knative.dev/max-scale': '2', 'autoscaling.knative.dev/target': '0', 'autoscaling.knative.dev/metric': 'cpu' }, undefined, DefaultAutoscalerConfig);
    expect(r.value).toMatchObject({ stableWindowMs: 60_000, minScale: 0, maxScale: 2, totalValue: 100, metric: 'concurrency' });
    expect(r.invalid).toHaveLength(4);
    const above = scalingSpec({ 'autoscaling.knative.dev/min-scale': '5', 'autoscaling.knative.dev/max-scale': '2' }, undefined, DefaultAutoscalerConfig);
    expect(above.value.minScale).toBe(2);
    expect(above.invalid[0]).toMatch(/min-scale: 5 is above max-scale 2/);
  });
});

describe('Decider (KPA)', () => {
  it('stable mode: ⌈average / (target × utilization)⌉', () => {
    const d = new Decider(spec({ target: '10' }));
    const current = { n: 1 };
    // 28 concurrent over the whole window, 4 ready: 28 / 7 = 4.
    const r = run(d, 0, 60_000, 28, () => 4, current);
    expect(r).toMatchObject({ desired: 4, panicking: false });
    expect(r.stable).toBe(28);
  });

  it('panics on a burst (desired jumps at once) and never scales down while panicking', () => {
    const d = new Decider(spec({ target: '5' }, 5));
    const current = { n: 1 };
    run(d, 0, 10_000, 1, () => 1, current);
    expect(current.n).toBe(1);
    // 50 concurrent in one second: the panic window (6 s) average is 50/6 → ⌈8.33/3.5⌉ = 3 ≥ 2 × 1 ready.
    const burst = run(d, 10_000, 11_000, 50, () => 1, current);
    expect(burst.panicking).toBe(true);
    expect(burst.desired).toBeGreaterThan(1);
    const step = run(d, 11_000, 16_000, 50, () => 1, current);
    expect(step.desired).toBe(15);
    // Load gone: still panicking for a stable window after the last over-threshold tick, at the peak.
    const calm = run(d, 16_000, 40_000, 0, () => 15, current);
    expect(calm.panicking).toBe(true);
    expect(calm.desired).toBe(15);
  });

  it('max-scale-down-rate halves at most per decision; max-scale bounds, min-scale floors', () => {
    const d = new Decider(spec({ 'max-scale': '3', 'min-scale': '1' }, 1));
    const current = { n: 1 };
    expect(run(d, 0, 3000, 20, () => 1, current).desired).toBe(3);
    const down = new Decider(spec({ target: '1', window: '6s' }));
    down.record(0, 0);
    expect(down.decide(0, 8, 8).desired).toBe(4);
    const floor = new Decider(spec({ 'min-scale': '2' }));
    expect(floor.decide(0, 0, 0).desired).toBe(2);
  });

  it('scales to zero only after the stable window of no traffic plus the grace period, and from zero to activation-scale', () => {
    const d = new Decider(spec({ window: '6s', 'activation-scale': '2' }, undefined, { 'scale-to-zero-grace-period': '6s' }));
    const current = { n: 1 };
    run(d, 0, 1000, 5, () => 1, current);
    expect(current.n).toBe(1);
    // Idle: the stable window (6 s) empties by 7 s; zero is wanted from then, for the 6 s grace.
    const idle = run(d, 1000, 12_000, 0, () => 1, current);
    expect(idle.desired).toBe(1);
    expect(idle.reason).toMatch(/scale to zero in/);
    expect(run(d, 12_000, 14_000, 0, () => 1, current).desired).toBe(0);
    // A request held at zero: the next decision wants activation-scale pods.
    d.record(14_000, 1);
    expect(d.decide(14_000, 0, 0).desired).toBe(2);
  });

  it('a new revision with no traffic keeps its pod until a whole stable window was observed', () => {
    const d = new Decider(spec({ window: '6s' }, undefined, { 'scale-to-zero-grace-period': '6s' }));
    const current = { n: 1 };
    expect(run(d, 0, 5000, 0, () => 1, current).reason).toBe('idle: a stable window not yet observed');
    expect(current.n).toBe(1);
    run(d, 5000, 12_000, 0, () => 1, current);
    expect(current.n).toBe(1);
    expect(run(d, 12_000, 13_000, 0, () => 1, current).desired).toBe(0);
  });

  it('enable-scale-to-zero false keeps one pod', () => {
    const d = new Decider(spec({ window: '6s' }, undefined, { 'enable-scale-to-zero': 'false' }));
    const current = { n: 1 };
    expect(run(d, 0, 120_000, 0, () => 1, current).desired).toBe(1);
  });

  it('scale-down-delay keeps the highest count wanted over the delay', () => {
    const d = new Decider(spec({ target: '1', window: '6s', 'scale-down-delay': '10s', 'max-scale-down-rate': '100' }, undefined, { 'max-scale-down-rate': '100' }));
    const current = { n: 0 };
    run(d, 0, 6000, 7, () => current.n, current);
    expect(current.n).toBe(10);
    const later = run(d, 6000, 14_000, 0, () => current.n, current);
    expect(later.desired).toBe(10);
    expect(run(d, 14_000, 30_000, 0, () => current.n, current).desired).toBeLessThan(10);
  });

  it('excess burst capacity as Knative computes it: ⌊ready × capacity − target-burst-capacity − panic average⌋; 0 and -1 as they are', () => {
    // containerConcurrency 10: a pod's capacity 10; the default target-burst-capacity 211.
    const d = new Decider(spec({}, 10));
    d.record(0, 0);
    expect(d.decide(0, 0, 0).excessBurstCapacity).toBe(-211);
    // 25 ready pods, a panic average of 12.5 over the 6 s window (75 in one second of six): 250 − 211 − 12.5 → 26.
    for (let t = 1000; t < 5000; t += 1000) d.record(t, 0);
    d.record(5000, 75);
    expect(d.decide(5000, 25, 25)).toMatchObject({ panic: 12.5, excessBurstCapacity: 26 });
    // The same pods, busier: 250 − 211 − 47.5 < 0.
    d.record(6000, 210);
    expect(d.decide(6000, 25, 25).excessBurstCapacity).toBe(-9);
    const zero = new Decider(spec({ 'target-burst-capacity': '0' }, 10));
    zero.record(0, 500);
    expect(zero.decide(0, 1, 1).excessBurstCapacity).toBe(0);
    const always = new Decider(spec({ 'target-burst-capacity': '-1' }, 10));
    always.record(0, 0);
    expect(always.decide(0, 100, 100).excessBurstCapacity).toBe(-1);
    // Without containerConcurrency a pod's capacity is the target (100 by default).
    expect(excessBurstCapacity(spec({ 'target-burst-capacity': '150' }), 2, 30)).toBe(20);
  });

  it('target-burst-capacity: -1, or at least 0; anything else keeps the default and is named', () => {
    expect(spec({ 'target-burst-capacity': '-1' }).targetBurstCapacity).toBe(-1);
    expect(spec({ 'target-burst-capacity': '0' }).targetBurstCapacity).toBe(0);
    expect(spec({ 'target-burst-capacity': '12.5' }).targetBurstCapacity).toBe(12.5);
    for (const bad of ['-0.5', '-2', 'lots', '', '1e3x']) {
      const r = scalingSpec({ 'autoscaling.knative.dev/target-burst-capacity': bad }, undefined, DefaultAutoscalerConfig);
      expect(r.value.targetBurstCapacity).toBe(211);
      expect(r.invalid).toEqual([`autoscaling.knative.dev/target-burst-capacity: ${JSON.stringify(bad)}`]);
    }
    const c = autoscalerConfig({ 'target-burst-capacity': '-3' });
    expect(c.value.targetBurstCapacity).toBe(211);
    expect(c.invalid).toEqual(['target-burst-capacity: "-3"']);
    expect(autoscalerConfig({ 'target-burst-capacity': '-1' }).value.targetBurstCapacity).toBe(-1);
  });

  it('in panic the count is the larger of the stable and panic wants', () => {
    // 70 concurrent for a stable window on 10 ready pods (target 10 × 70 %: 10 wanted, no panic).
    const d = new Decider(spec({ target: '10' }));
    const current = { n: 10 };
    expect(run(d, 0, 60_000, 70, () => 10, current)).toMatchObject({ desired: 10, panicking: false });
    // Then 14 with one pod left ready: the panic window wants fewer (⌈60.7 / 7⌉ = 9, then less) but
    // panics (≥ 2 × 1 ready); the stable window still wants 10, and that is the count.
    const r = run(d, 60_000, 66_000, 14, () => 1, current);
    expect(r.panicking).toBe(true);
    expect(Math.ceil(r.panic / 7)).toBeLessThan(10);
    expect(r.desired).toBe(Math.ceil(r.stable / 7));
    expect(r.desired).toBe(10);
  });
});

describe('the revision\'s mode: the activator in its path (Proxy) or not (Serve)', () => {
  it('is Proxy at zero wanted or with negative excess burst capacity, Serve otherwise', () => {
    expect(burstMode(0, 100)).toBe('Proxy');
    expect(burstMode(3, -1)).toBe('Proxy');
    expect(burstMode(3, 0)).toBe('Serve');
    expect(burstMode(1, 26)).toBe('Serve');
  });

  it('reads the mark on a Revision: none, or anything but Serve, is Proxy; the gateway holds at containerConcurrency only in Proxy', () => {
    expect(modeOf(undefined)).toBe('Proxy');
    expect(modeOf({ [BurstModeAnnotation]: 'Serve' })).toBe('Serve');
    for (const v of ['serve', 'Proxy', '', 'Serve ']) expect(modeOf({ [BurstModeAnnotation]: v })).toBe('Proxy');
    expect(gatewayPodCapacity({ [BurstModeAnnotation]: 'Proxy' }, 5)).toBe(5);
    expect(gatewayPodCapacity(undefined, 5)).toBe(5);
    expect(gatewayPodCapacity(undefined, undefined)).toBe(0);
    expect(gatewayPodCapacity({ [BurstModeAnnotation]: 'Serve' }, 5)).toBe(0);
  });
});
