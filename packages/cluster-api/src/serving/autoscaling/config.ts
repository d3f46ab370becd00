/**
 * Knative's autoscaler settings: the cluster's, from the ConfigMap `config-autoscaler` in
 * `knative-serving` (its keys and defaults, knative-v1.23), and one revision's, from its
 * `autoscaling.knative.dev/*` annotations over those. Admission refuses a bad annotation as Knative's
 * webhook does (admission/knative-serving/autoscaling-annotations.ts); what is read here anyway (a
 * ConfigMap value, an annotation the ConfigMap no longer allows) that does not parse or is out of
 * Knative's range keeps the default, and is named in `invalid` (the autoscaler says so in a Warning
 * Event).
 */
import { GoDuration, goDurationMs } from '../../registry/kinds/cron.js';

export const AutoscalerConfigMap = { namespace: 'knative-serving', name: 'config-autoscaler' } as const;

export const KpaClass = 'kpa.autoscaling.knative.dev';
export const AnnotationPrefix = 'autoscaling.knative.dev/';

/** Knative's bounds for windows and the grace period. */
export const WindowMinMs = 6_000;
export const WindowMaxMs = 3600_000;

export interface AutoscalerConfig {
  containerConcurrencyTargetDefault: number;
  /** Fraction (70 % → 0.7). */
  targetUtilization: number;
  rpsTargetDefault: number;
  targetBurstCapacity: number;
  stableWindowMs: number;
  panicWindowPercentage: number;
  panicThresholdPercentage: number;
  maxScaleUpRate: number;
  maxScaleDownRate: number;
  enableScaleToZero: boolean;
  scaleToZeroGracePeriodMs: number;
  scaleToZeroPodRetentionMs: number;
  activatorCapacity: number;
  initialScale: number;
  allowZeroInitialScale: boolean;
  minScale: number;
  maxScale: number;
  /** The most max-scale a revision may ask for (0: no limit; Knative's webhook enforces it on create). */
  maxScaleLimit: number;
  scaleDownDelayMs: number;
}

export const DefaultAutoscalerConfig: AutoscalerConfig = {
  containerConcurrencyTargetDefault: 100, targetUtilization: 0.7, rpsTargetDefault: 200, targetBurstCapacity: 211,
  stableWindowMs: 60_000, panicWindowPercentage: 10, panicThresholdPercentage: 200, maxScaleUpRate: 1000, maxScaleDownRate: 2,
  enableScaleToZero: true, scaleToZeroGracePeriodMs: 30_000, scaleToZeroPodRetentionMs: 0, activatorCapacity: 100,
  initialScale: 1, allowZeroInitialScale: false, minScale: 0, maxScale: 0, maxScaleLimit: 0, scaleDownDelayMs: 0,
};

type Reader<T> = (v: string) => T | undefined;
const number = (min: number, max = Infinity, exclusiveMin = false): Reader<number> => (v) => {
  const t = v.trim();
  if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(t)) return undefined;
  const n = Number(t);
  return (exclusiveMin ? n > min : n >= min) && n <= max ? n : undefined;
};
const integer = (min: number, max = Infinity): Reader<number> => (v) => (/^\s*\d+\s*$/.test(v) ? number(min, max)(v) : undefined);
const duration = (min: number, max: number): Reader<number> => (v) => {
  const t = v.trim();
  if (!GoDuration.test(t) || t.startsWith('-')) return undefined;
  const ms = goDurationMs(t);
  return ms >= min && ms <= max ? ms : undefined;
};
/** target-burst-capacity: -1 (the activator always in the path) or at least 0. */
const burstCapacity: Reader<number> = (v) => { const n = number(-1)(v); return n === undefined || (n < 0 && n !== -1) ? undefined : n; };
const bool: Reader<boolean> = (v) => (v.trim() === 'true' ? true : v.trim() === 'false' ? false : undefined);

/** The ConfigMap's keys: each setting's name, reader. */
const ConfigKeys: { [K in keyof AutoscalerConfig]: [string, Reader<AutoscalerConfig[K]>] } = {
  containerConcurrencyTargetDefault: ['container-concurrency-target-default', number(0.01)],
  targetUtilization: ['container-concurrency-target-percentage', (v) => { const n = number(1, 100)(v); return n === undefined ? undefined : n / 100; }],
  rpsTargetDefault: ['requests-per-second-target-default', number(0.01)],
  targetBurstCapacity: ['target-burst-capacity', burstCapacity],
  stableWindowMs: ['stable-window', duration(WindowMinMs, WindowMaxMs)],
  panicWindowPercentage: ['panic-window-percentage', number(1, 100)],
  panicThresholdPercentage: ['panic-threshold-percentage', number(110, 1000)],
  maxScaleUpRate: ['max-scale-up-rate', number(1, Infinity, true)],
  maxScaleDownRate: ['max-scale-down-rate', number(1, Infinity, true)],
  enableScaleToZero: ['enable-scale-to-zero', bool],
  scaleToZeroGracePeriodMs: ['scale-to-zero-grace-period', duration(WindowMinMs, WindowMaxMs)],
  scaleToZeroPodRetentionMs: ['scale-to-zero-pod-retention-period', duration(0, WindowMaxMs)],
  activatorCapacity: ['activator-capacity', number(1)],
  initialScale: ['initial-scale', integer(0)],
  allowZeroInitialScale: ['allow-zero-initial-scale', bool],
  minScale: ['min-scale', integer(0)],
  maxScale: ['max-scale', integer(0)],
  maxScaleLimit: ['max-scale-limit', integer(0)],
  scaleDownDelayMs: ['scale-down-delay', duration(0, WindowMaxMs)],
};

export interface Parsed<T> {
  value: T;
  /** `key: value` of each setting that was refused (the default kept). */
  invalid: string[];
}

/** The cluster's settings from the ConfigMap's data (absent: Knative's defaults). */
export function autoscalerConfig(data: Record<string, string> | undefined): Parsed<AutoscalerConfig> {
  const value = { ...DefaultAutoscalerConfig } as Record<string, unknown>;
  const invalid: string[] = [];
  for (const [field, [key, read]] of Object.entries(ConfigKeys) as [keyof AutoscalerConfig, [string, Reader<unknown>]][]) {
    const raw = data?.[key];
    if (raw === undefined) continue;
    const v = typeof raw === 'string' ? read(raw) : undefined;
    if (v === undefined) invalid.push(`${key}: ${JSON.stringify(raw)}`);
    else value[field] = v;
  }
  const config = value as unknown as AutoscalerConfig;
  if (config.initialScale === 0 && !config.allowZeroInitialScale) {
    invalid.push('initial-scale: "0" (allow-zero-initial-scale is false)');
    config.initialScale = DefaultAutoscalerConfig.initialScale;
  }
  return { value: config, invalid };
}

export type Metric = 'concurrency' | 'rps';

/** One revision's autoscaling: the resolved numbers the decider works with. */
export interface ScalingSpec {
  class: string;
  metric: Metric;
  /** The per-pod value the decider aims at: target × utilization. */
  targetValue: number;
  /** The per-pod capacity (target, or containerConcurrency): what the activator counts as a pod's room. */
  totalValue: number;
  stableWindowMs: number;
  panicWindowMs: number;
  /** Fraction (200 % → 2). */
  panicThreshold: number;
  maxScaleUpRate: number;
  maxScaleDownRate: number;
  minScale: number;
  /** 0: no bound. */
  maxScale: number;
  initialScale: number;
  scaleDownDelayMs: number;
  activationScale: number;
  targetBurstCapacity: number;
  enableScaleToZero: boolean;
  scaleToZeroGracePeriodMs: number;
  scaleToZeroPodRetentionMs: number;
}

const Annotations = {
  class: 'class', metric: 'metric', target: 'target', utilization: 'target-utilization-percentage', window: 'window',
  panicWindow: 'panic-window-percentage', panicThreshold: 'panic-threshold-percentage', minScale: 'min-scale', maxScale: 'max-scale',
  initialScale: 'initial-scale', scaleDownDelay: 'scale-down-delay', activationScale: 'activation-scale', burst: 'target-burst-capacity',
  retention: 'scale-to-zero-pod-retention-period',
} as const;

/** A revision's settings from its annotations and `containerConcurrency` over the cluster's. */
export function scalingSpec(annotations: Record<string, string> | undefined, containerConcurrency: number | undefined, config: AutoscalerConfig): Parsed<ScalingSpec> {
  const invalid: string[] = [];
  const a = annotations ?? {};
  const read = <T>(name: string, reader: Reader<T>, fallback: T): T => {
    const raw = a[AnnotationPrefix + name];
    if (raw === undefined) return fallback;
    const v = typeof raw === 'string' ? reader(raw) : undefined;
    if (v === undefined) invalid.push(`${AnnotationPrefix}${name}: ${JSON.stringify(raw)}`);
    return v ?? fallback;
  };
  const cls = read(Annotations.class, (v) => v.trim() || undefined, KpaClass);
  const metric = read<Metric>(Annotations.metric, (v) => (v === 'concurrency' || v === 'rps' ? v : undefined), 'concurrency');
  const cc = containerConcurrency && containerConcurrency > 0 ? containerConcurrency : 0;
  // Knative: the target defaults to containerConcurrency when that is set, and never exceeds it.
  const defaultTarget = metric === 'rps' ? config.rpsTargetDefault : cc || config.containerConcurrencyTargetDefault;
  let target = read(Annotations.target, number(0.01), defaultTarget);
  if (metric === 'concurrency' && cc && target > cc) target = cc;
  const utilization = read(Annotations.utilization, (v) => { const n = number(1, 100)(v); return n === undefined ? undefined : n / 100; }, config.targetUtilization);
  const stableWindowMs = read(Annotations.window, duration(WindowMinMs, WindowMaxMs), config.stableWindowMs);
  const panicPct = read(Annotations.panicWindow, number(1, 100), config.panicWindowPercentage);
  const panicThreshold = read(Annotations.panicThreshold, number(110, 1000), config.panicThresholdPercentage) / 100;
  let minScale = read(Annotations.minScale, integer(0), config.minScale);
  let maxScale = read(Annotations.maxScale, integer(0), config.maxScale);
  if (maxScale > 0 && minScale > maxScale) {
    invalid.push(`${AnnotationPrefix}min-scale: ${minScale} is above max-scale ${maxScale}`);
    minScale = maxScale;
  }
  const initialScale = read(Annotations.initialScale, (v) => { const n = integer(0)(v); return n === 0 && !config.allowZeroInitialScale ? undefined : n; }, config.initialScale);
  const scaleDownDelayMs = read(Annotations.scaleDownDelay, duration(0, WindowMaxMs), config.scaleDownDelayMs);
  let activationScale = read(Annotations.activationScale, integer(1), 1);
  if (maxScale > 0 && activationScale > maxScale) activationScale = maxScale;
  const targetBurstCapacity = read(Annotations.burst, burstCapacity, config.targetBurstCapacity);
  const retention = read(Annotations.retention, duration(0, WindowMaxMs), config.scaleToZeroPodRetentionMs);
  return {
    value: {
      class: cls, metric, targetValue: Math.max(0.01, target * utilization), totalValue: target,
      stableWindowMs, panicWindowMs: Math.max(1000, (stableWindowMs * panicPct) / 100), panicThreshold,
      maxScaleUpRate: config.maxScaleUpRate, maxScaleDownRate: config.maxScaleDownRate,
      minScale, maxScale, initialScale, scaleDownDelayMs, activationScale, targetBurstCapacity,
      enableScaleToZero: config.enableScaleToZero, scaleToZeroGracePeriodMs: config.scaleToZeroGracePeriodMs, scaleToZeroPodRetentionMs: retention,
    },
    invalid,
  };
}
