/**
 * What kube-controller-manager does with a metric's proposal before it scales (horizontal.go):
 * without `behavior`, the highest recommendation of the downscale stabilization window (default
 * 5 min) and the old rate limit (at most max(2 × current, 4)); with it, the stabilization windows
 * of both directions (the lowest recent recommendation caps a scale-up, the highest a scale-down),
 * then the policies' rate (Pods or Percent per period, Max, Min or Disabled) over the scale events
 * of their periods. Each step names the condition it sets (AbleToScale, ScalingLimited). Pure: the
 * recommendations and scale events of an autoscaler are passed in (kept by the controller) and
 * `now` is given.
 */
import type { Obj } from '../../registry/kinds/common.js';
import { DefaultScaleDown, DefaultScaleUp, rulesWithDefaults, type ScalingRules } from '../../registry/kinds/horizontal-pod-autoscaler.js';

/** --horizontal-pod-autoscaler-downscale-stabilization. */
export const DefaultDownscaleStabilizationMs = 5 * 60_000;

export interface Timed {
  at: number;
  value: number;
  /** A scale event older than its policies' longest period, whose slot the next one reuses. */
  outdated?: boolean;
}

/** One autoscaler's history: its recent recommendations, its scale-up and scale-down events. */
export interface History {
  recommendations: Timed[];
  scaleUps: Timed[];
  scaleDowns: Timed[];
}

export const newHistory = (): History => ({ recommendations: [], scaleUps: [], scaleDowns: [] });

export interface Condition {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

export interface Normalized {
  replicas: number;
  ableToScale: Condition;
  scalingLimited: Condition;
}

type Rules = ScalingRules;

const ReadyForNewScale: Condition = { status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size' };

/** Records `value` at `now`, in the slot of one older than `cutoff` when there is one. */
const record = (list: Timed[], value: number, now: number, old: (t: Timed) => boolean): void => {
  const i = list.findIndex(old);
  if (i >= 0) list[i] = { at: now, value };
  else list.push({ at: now, value });
};

interface Args {
  current: number;
  desired: number;
  min: number;
  max: number;
  now: number;
}

/** convertDesiredReplicasWithRules: the rate limit without behavior. */
const withRules = ({ current, desired, min, max }: Args): [number, string, string] => {
  const scaleUpLimit = Math.max(2 * current, 4);
  const [maximum, reason, message] = max > scaleUpLimit
    ? [scaleUpLimit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
    : [max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
  if (desired < min) return [min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'];
  if (desired > maximum) return [maximum, reason, message];
  return [desired, 'DesiredWithinRange', 'the desired count is within the acceptable range'];
};

const limited = (replicas: number, stabilized: number, reason: string, message: string): Condition =>
  ({ status: replicas === stabilized ? 'False' : 'True', reason, message });

/** normalizeDesiredReplicas: an autoscaler without `behavior`. */
export function normalize(h: History, args: Args, downscaleStabilizationMs = DefaultDownscaleStabilizationMs): Normalized {
  const cutoff = args.now - downscaleStabilizationMs;
  let stabilized = args.desired;
  for (const r of h.recommendations) if (r.at >= cutoff && r.value > stabilized) stabilized = r.value;
  record(h.recommendations, args.desired, args.now, (r) => r.at < cutoff);
  const ableToScale = stabilized !== args.desired
    ? { status: 'True' as const, reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' }
    : ReadyForNewScale;
  const [replicas, reason, message] = withRules({ ...args, desired: stabilized });
  return { replicas, ableToScale, scalingLimited: limited(replicas, stabilized, reason, message) };
}

/** getReplicasChangePerPeriod. */
const changeInPeriod = (events: readonly Timed[], periodSeconds: number, now: number): number =>
  events.filter((e) => e.at > now - periodSeconds * 1000).reduce((a, e) => a + e.value, 0);

/** calculateScaleUpLimitWithScalingRules. */
export function scaleUpLimit(current: number, events: readonly Timed[], rules: Rules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  const pick = rules.selectPolicy === 'Min' ? Math.min : Math.max;
  let result = rules.selectPolicy === 'Min' ? Infinity : -Infinity;
  for (const p of rules.policies) {
    const start = current - changeInPeriod(events, p.periodSeconds, now);
    result = pick(result, p.type === 'Pods' ? start + p.value : Math.ceil(start * (1 + p.value / 100)));
  }
  return result;
}

/** calculateScaleDownLimitWithBehaviors. */
export function scaleDownLimit(current: number, events: readonly Timed[], rules: Rules, now: number): number {
  if (rules.selectPolicy === 'Disabled') return current;
  // The policy allowing the biggest change is the one with the lowest limit.
  const pick = rules.selectPolicy === 'Min' ? Math.max : Math.min;
  let result = rules.selectPolicy === 'Min' ? -Infinity : Infinity;
  for (const p of rules.policies) {
    const start = current + changeInPeriod(events, p.periodSeconds, now);
    result = pick(result, p.type === 'Pods' ? start - p.value : Math.trunc(start * (1 - p.value / 100)));
  }
  return result;
}

/** The behavior of an autoscaler with every default filled in; the scale-down window the controller's when the spec names none. */
export const behaviorRules = (behavior: Obj, downscaleStabilizationMs = DefaultDownscaleStabilizationMs): { up: Rules; down: Rules } => {
  const up = rulesWithDefaults(behavior.scaleUp, DefaultScaleUp);
  const down = rulesWithDefaults(behavior.scaleDown, DefaultScaleDown);
  down.stabilizationWindowSeconds ??= downscaleStabilizationMs / 1000;
  return { up, down };
};

/** normalizeDesiredReplicasWithBehaviors. */
export function normalizeWithBehavior(h: History, args: Args, behavior: Obj, downscaleStabilizationMs = DefaultDownscaleStabilizationMs): Normalized {
  const { up, down } = behaviorRules(behavior, downscaleStabilizationMs);
  const { now, current, desired } = args;
  // stabilizeRecommendationWithBehaviors.
  const upCutoff = now - (up.stabilizationWindowSeconds ?? 0) * 1000;
  const downCutoff = now - (down.stabilizationWindowSeconds ?? 0) * 1000;
  let upRecommendation = desired;
  let downRecommendation = desired;
  for (const r of h.recommendations) {
    if (r.at > upCutoff) upRecommendation = Math.min(r.value, upRecommendation);
    if (r.at > downCutoff) downRecommendation = Math.max(r.value, downRecommendation);
  }
  let stabilized = Math.max(current, upRecommendation);
  stabilized = Math.min(stabilized, downRecommendation);
  record(h.recommendations, desired, now, (r) => r.at < upCutoff && r.at < downCutoff);
  const ableToScale = stabilized === desired
    ? ReadyForNewScale
    : desired >= current
      ? { status: 'True' as const, reason: 'ScaleUpStabilized', message: 'recent recommendations were lower than current one, applying the lowest recent recommendation' }
      : { status: 'True' as const, reason: 'ScaleDownStabilized', message: 'recent recommendations were higher than current one, applying the highest recent recommendation' };
  // convertDesiredReplicasWithBehaviorRate.
  let out: [number, string, string] = [stabilized, 'DesiredWithinRange', 'the desired count is within the acceptable range'];
  if (stabilized > current) {
    const limit = Math.max(scaleUpLimit(current, h.scaleUps, up, now), current);
    const [maximum, reason, message] = args.max > limit
      ? [limit, 'ScaleUpLimit', 'the desired replica count is increasing faster than the maximum scale rate']
      : [args.max, 'TooManyReplicas', 'the desired replica count is more than the maximum replica count'];
    if (stabilized > maximum) out = [maximum, reason, message];
  } else if (stabilized < current) {
    const limit = Math.min(scaleDownLimit(current, h.scaleDowns, down, now), current);
    const [minimum, reason, message] = args.min < limit
      ? [limit, 'ScaleDownLimit', 'the desired replica count is decreasing faster than the maximum scale rate']
      : [args.min, 'TooFewReplicas', 'the desired replica count is less than the minimum replica count'];
    if (stabilized < minimum) out = [minimum, reason, message];
  }
  const [replicas, reason, message] = out;
  return { replicas, ableToScale, scalingLimited: limited(replicas, stabilized, reason, message) };
}

/** storeScaleEvent: a rescale an autoscaler with `behavior` made, for its policies' periods. */
export function recordScale(h: History, behavior: Obj | undefined, from: number, to: number, now: number, downscaleStabilizationMs = DefaultDownscaleStabilizationMs): void {
  if (!behavior) return;
  const { up, down } = behaviorRules(behavior, downscaleStabilizationMs);
  const [events, rules, change] = to > from ? [h.scaleUps, up, to - from] : [h.scaleDowns, down, from - to];
  const longest = Math.max(0, ...rules.policies.map((p) => p.periodSeconds));
  for (const e of events) if (e.at <= now - longest * 1000) e.outdated = true;
  record(events, change, now, (e) => e.outdated === true);
}
