/**
 * What Knative's eventing webhook (`validation.webhook.eventing.knative.dev`) refuses of the
 * messaging and flows kinds, with its field paths and wording: the admission plugin refuses a write
 * with these, and the data plane and controllers turn the same into False conditions for objects
 * stored without it (Knative's CRDs applied, objects written before).
 */
import { channelProblems, destinationProblems, subscriptionProblems } from '../channel/status.js';
import { ChannelKinds, MESSAGING_V1, type Channel, type Subscription } from '../channel/types.js';
import { deliveryProblems, type FieldProblem } from '../delivery/policy.js';
import type { ChannelTemplate, Parallel, Sequence } from './types.js';

/** Knative's default channel (config-default-channel): an InMemoryChannel. */
export const DEFAULT_CHANNEL_TEMPLATE: Readonly<ChannelTemplate> = { apiVersion: MESSAGING_V1, kind: 'InMemoryChannel' };

function templateProblems(t: ChannelTemplate | undefined, out: FieldProblem[]): void {
  if (t === undefined) return;
  if (typeof t !== 'object' || t === null || !t.kind || !t.apiVersion) out.push({ path: 'spec.channelTemplate', message: 'missing field(s): apiVersion, kind' });
  else if (t.apiVersion !== MESSAGING_V1 || !(t.kind in ChannelKinds))
    out.push({ path: 'spec.channelTemplate', message: `channel template ${t.apiVersion}/${t.kind} is not supported: one of ${Object.keys(ChannelKinds).join(', ')} of ${MESSAGING_V1}` });
}

export function sequenceProblems(s: Sequence): FieldProblem[] {
  const out: FieldProblem[] = [];
  const steps = s.spec?.steps;
  if (!Array.isArray(steps) || steps.length === 0) out.push({ path: 'spec.steps', message: 'missing field(s)' });
  else
    steps.forEach((step, i) => {
      if (!step || typeof step !== 'object' || (!step.ref && !step.uri)) out.push({ path: `spec.steps[${i}]`, message: 'expected at least one, got neither: ref, uri' });
      else destinationProblems(step, `spec.steps[${i}]`, out);
      out.push(...deliveryProblems(step?.delivery, `spec.steps[${i}].delivery`));
    });
  templateProblems(s.spec?.channelTemplate, out);
  destinationProblems(s.spec?.reply, 'spec.reply', out);
  return out;
}

export function parallelProblems(p: Parallel): FieldProblem[] {
  const out: FieldProblem[] = [];
  const branches = p.spec?.branches;
  if (!Array.isArray(branches) || branches.length === 0) out.push({ path: 'spec.branches', message: 'missing field(s)' });
  else
    branches.forEach((b, i) => {
      if (!b || typeof b !== 'object' || !b.subscriber) out.push({ path: `spec.branches[${i}].subscriber`, message: 'missing field(s)' });
      else destinationProblems(b.subscriber, `spec.branches[${i}].subscriber`, out);
      destinationProblems(b?.filter, `spec.branches[${i}].filter`, out);
      destinationProblems(b?.reply, `spec.branches[${i}].reply`, out);
      out.push(...deliveryProblems(b?.delivery, `spec.branches[${i}].delivery`));
    });
  templateProblems(p.spec?.channelTemplate, out);
  destinationProblems(p.spec?.reply, 'spec.reply', out);
  return out;
}

/** The problems of an object of one of the kinds, by its `kind`; undefined for other kinds. */
export function eventingProblems(kind: string, o: unknown): FieldProblem[] | undefined {
  switch (kind) {
    case 'Channel':
    case 'InMemoryChannel':
      return channelProblems({ ...(o as Channel), kind });
    case 'Subscription':
      return subscriptionProblems(o as Subscription);
    case 'Sequence':
      return sequenceProblems(o as Sequence);
    case 'Parallel':
      return parallelProblems(o as Parallel);
    default:
      return undefined;
  }
}
