/**
 * Knative's validation of a revision template's `autoscaling.knative.dev/*` annotations
 * (`autoscaling.ValidateAnnotations`), with its messages: the class (another `*.knative.dev` class
 * than KPA or HPA is refused), min-scale and max-scale (integers from 0, max-scale not below
 * min-scale, not above config-autoscaler's max-scale-limit when one is set), initial-scale (0 only
 * with allow-zero-initial-scale), target (at least 0.01), target-utilization-percentage (1–100),
 * panic-window-percentage (1–100), panic-threshold-percentage (110–1000), target-burst-capacity
 * (-1 or from 0), window (6s–1h, whole seconds), scale-down-delay (0s–1h, whole seconds),
 * scale-to-zero-pod-retention-period (0s–1h), the metric the class takes, and the KPA's
 * metric-aggregation-algorithm. The autoscaler reads the same annotations leniently
 * (serving/autoscaling/config.ts) for objects stored before this check.
 */
import { GoDuration, goDurationMs } from '../../registry/kinds/cron.js';
import { AnnotationPrefix, KpaClass, WindowMaxMs, WindowMinMs, type AutoscalerConfig } from '../../serving/autoscaling/config.js';

export interface FieldError { message: string; path: string }

const HpaClass = 'hpa.autoscaling.knative.dev';
const MaxInt32 = 2147483647;
const Algorithms = new Set(['linear', 'weightedExponential', 'weighted-exponential']);

/** Go's time.Duration printing for the bounds Knative names (6s, 0s, 1h0m0s). */
const goPrinted = (ms: number): string => {
  if (ms === 0) return '0s';
  const h = Math.floor(ms / 3600_000);
  const m = Math.floor((ms % 3600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
};
/** strconv.ParseFloat's decimal forms (no hex, no inf). */
const float = (v: string): number | undefined => (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(v) ? Number(v) : undefined);
/** time.ParseDuration (a bare 0 included). */
const duration = (v: string): number | undefined => (v === '0' ? 0 : GoDuration.test(v) ? (v.startsWith('-') ? -goDurationMs(v.slice(1)) : goDurationMs(v.replace(/^\+/, ''))) : undefined);

/** The errors of `annotations` (a template's), each path under `path` (`spec.template.metadata.annotations`). */
export function autoscalingAnnotationErrors(annotations: Record<string, unknown> | undefined, config: Pick<AutoscalerConfig, 'allowZeroInitialScale' | 'maxScaleLimit'>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const get = (name: string): string | undefined => {
    const v = annotations?.[AnnotationPrefix + name];
    return v === undefined ? undefined : String(v);
  };
  const at = (name: string) => `${path}.${AnnotationPrefix}${name}`;
  const invalid = (v: string, name: string) => errs.push({ message: `invalid value: ${v}`, path: at(name) });
  const outOfBounds = (v: string | number, lower: string | number, upper: string | number, name: string) => errs.push({ message: `expected ${lower} <= ${v} <= ${upper}`, path: at(name) });

  const cls = get('class');
  if (cls !== undefined && cls.endsWith('.knative.dev') && cls !== KpaClass && cls !== HpaClass) invalid(cls, 'class');

  const intGE0 = (name: string): number => {
    const v = get(name);
    if (v === undefined) return 0;
    if (!/^[+-]?\d+$/.test(v)) return invalid(v, name), 0;
    const n = Number(v);
    if (n < 0 || n > MaxInt32) return outOfBounds(v, 0, MaxInt32, name), 0;
    return n;
  };
  const min = intGE0('min-scale');
  const max = intGE0('max-scale');
  if (max !== 0 && max < min) errs.push({ message: `max-scale=${max} is less than min-scale=${min}`, path: `${at('max-scale')}, ${at('min-scale')}` });
  if (get('max-scale') !== undefined && config.maxScaleLimit > 0) {
    if (max > config.maxScaleLimit) outOfBounds(max, 1, config.maxScaleLimit, 'max-scale');
    if (max === 0) errs.push({ message: `max-scale=0 (unlimited), must be less than ${config.maxScaleLimit}`, path: at('max-scale') });
  }

  const ranged = (name: string, lower: number, upper: number) => {
    const v = get(name);
    if (v === undefined) return;
    const n = float(v);
    if (n === undefined) invalid(v, name);
    else if (n < lower || n > upper) outOfBounds(v, lower, upper, name);
  };
  ranged('panic-window-percentage', 1, 100);
  ranged('panic-threshold-percentage', 110, 1000);
  const target = get('target');
  if (target !== undefined) {
    const n = float(target);
    if (n === undefined || n < 0.01) errs.push({ message: `target ${target} should be at least 0.01`, path: at('target') });
  }
  ranged('target-utilization-percentage', 1, 100);
  const burst = get('target-burst-capacity');
  if (burst !== undefined) {
    const n = float(burst);
    if (n === undefined || (n < 0 && n !== -1)) invalid(burst, 'target-burst-capacity');
  }

  const timed = (name: string, lower: number, upper: number, wholeSeconds: boolean) => {
    const v = get(name);
    if (v === undefined) return;
    const ms = duration(v);
    if (ms === undefined) invalid(v, name);
    else if (ms < lower || ms > upper) outOfBounds(v, goPrinted(lower), goPrinted(upper), name);
    else if (wholeSeconds && ms % 1000 !== 0) errs.push({ message: 'must be specified with at most second precision', path: at(name) });
  };
  timed('window', WindowMinMs, WindowMaxMs, true);
  timed('scale-to-zero-pod-retention-period', 0, WindowMaxMs, false);
  timed('scale-down-delay', 0, WindowMaxMs, true);

  const metric = get('metric');
  if (metric !== undefined) {
    const c = cls ?? KpaClass;
    const ok = c === KpaClass ? metric === 'concurrency' || metric === 'rps' : c === HpaClass ? metric !== '' : true;
    if (!ok) invalid(metric, 'metric');
  }
  const algorithm = get('metric-aggregation-algorithm');
  if (cls === KpaClass && algorithm && !Algorithms.has(algorithm)) invalid(algorithm, 'metric-aggregation-algorithm');

  const initial = get('initial-scale');
  if (initial !== undefined) {
    const n = /^[+-]?\d+$/.test(initial) ? Number(initial) : undefined;
    if (n === undefined || n < 0 || (n === 0 && !config.allowZeroInitialScale)) invalid(initial, 'initial-scale');
  }
  return errs;
}
