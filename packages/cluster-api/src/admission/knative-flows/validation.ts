/**
 * Knative Eventing's validating webhook (`validation.webhook.eventing.knative.dev`) for the
 * messaging and flows kinds, as an admission plugin: a Channel's template of a kind not served
 * here, a Subscription without a channel or without subscriber and reply, a Sequence without
 * steps, a Parallel branch without a subscriber, a Destination that is neither `ref` nor `uri`, a
 * bad DeliverySpec; and a Subscription's `spec.channel` never changes (Knative's immutable field).
 * A refusal is the Status kube-apiserver answers for a webhook's denial (400, its message prefixed
 * `admission webhook "…" denied the request: validation failed:`), each problem `message: path`.
 * The rules are broker/flows/validation.ts, which the data plane and controllers apply as conditions
 * to objects stored without this plugin.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../../api/errors.js';
import type { FieldProblem } from '../../broker/delivery/policy.js';
import { eventingProblems } from '../../broker/flows/validation.js';
import type { AdmissionPlugin } from '../plugin.js';

const Groups = new Set(['messaging.knative.dev', 'flows.knative.dev']);
const Webhook = 'validation.webhook.eventing.knative.dev';

const denied = (problems: readonly FieldProblem[]): ApiError =>
  new ApiError(400, 'BadRequest', `admission webhook "${Webhook}" denied the request: validation failed: ${problems.map((p) => `${p.message}: ${p.path}`).join('\n')}`);

export const KnativeFlowsValidation: AdmissionPlugin = {
  name: 'knative.dev/eventing-flows',
  handles: (req) => Groups.has(req.group) && (req.operation === 'CREATE' || req.operation === 'UPDATE') && req.subresource === undefined,
  validate(req) {
    const problems = [...(eventingProblems(req.kind, req.object) ?? [])];
    if (req.kind === 'Subscription' && req.operation === 'UPDATE') {
      const before = (req.oldObject as { spec?: { channel?: unknown } } | undefined)?.spec?.channel;
      const after = (req.object as { spec?: { channel?: unknown } }).spec?.channel;
      if (!isDeepStrictEqual(before, after)) problems.push({ path: 'spec.channel', message: 'Immutable fields changed (-old +new)' });
    }
    if (problems.length > 0) throw denied(problems);
  },
};
