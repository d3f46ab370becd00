/**
 * The status every source writes (Knative's duckv1.SourceStatus): its conditions (Ready over the
 * kind's dependents, serving/conditions.ts), `observedGeneration`, `sinkUri` once resolved, and the
 * CloudEvent attributes it sends (`ceAttributes`). Sink resolution marks `SinkProvided` as Knative's
 * reconcilers do: False with reason `NotFound` and the resolver's error when the sink cannot be
 * resolved. OIDC is not enabled here, so `OIDCIdentityCreated` is True with Knative's reason for that.
 */
import type { Resolution } from '../broker/status/status.js';
import { conditionSet, type Marked } from '../serving/conditions.js';
import type { Obj } from '../serving/kinds.js';

export const sinkProvided = (sink: Resolution): Marked =>
  'uri' in sink ? { type: 'SinkProvided', status: 'True' } : { type: 'SinkProvided', status: 'False', reason: 'NotFound', message: sink.error };

export const OidcDisabled: Marked = { type: 'OIDCIdentityCreated', status: 'True', reason: 'authentication-oidc feature disabled' };

export const sourceStatus = (source: Obj, marked: readonly Marked[], sink: Resolution | undefined, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  observedGeneration: source.metadata.generation,
  conditions: conditionSet(source.status?.conditions, marked),
  ...(sink && 'uri' in sink && { sinkUri: sink.uri }),
  ...extra,
});
