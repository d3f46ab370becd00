/**
 * Knative's Sequence reconciler (flows.knative.dev/v1): a channel and a Subscription per step,
 * each step's reply to the next step's channel, the last one's to the Sequence's `reply`; its
 * address is the first channel's (see broker/flows/children.ts for the wiring, flow-children.ts
 * for the reconcile both flows share).
 */
import { sequenceChildren } from '../../broker/flows/children.js';
import type { Sequence } from '../../broker/flows/types.js';
import { sequenceProblems } from '../../broker/flows/validation.js';
import type { ServingEnv } from '../../serving/kinds.js';
import { startFlowController } from '../flow-children.js';
import type { Controller } from '../shared.js';

export const startSequenceController = (env: ServingEnv): Controller =>
  startFlowController<Sequence>(env, { name: 'flows-sequence-controller', kind: 'Sequence', store: 'sequences', problems: sequenceProblems, children: sequenceChildren });
