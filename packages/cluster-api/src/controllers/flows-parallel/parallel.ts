/**
 * Knative's Parallel reconciler (flows.knative.dev/v1): an ingress channel, and per branch a
 * filter Subscription on it replying to the branch's channel, and a Subscription on that channel
 * to the branch's subscriber replying to the branch's (else the Parallel's) `reply`; its address is
 * the ingress channel's (see broker/flows/children.ts for the wiring, flow-children.ts for the
 * reconcile both flows share).
 */
import { parallelChildren } from '../../broker/flows/children.js';
import type { Parallel } from '../../broker/flows/types.js';
import { parallelProblems } from '../../broker/flows/validation.js';
import type { ServingEnv } from '../../serving/kinds.js';
import { startFlowController } from '../flow-children.js';
import type { Controller } from '../shared.js';

export const startParallelController = (env: ServingEnv): Controller =>
  startFlowController<Parallel>(env, { name: 'flows-parallel-controller', kind: 'Parallel', store: 'parallels', problems: parallelProblems, children: parallelChildren });
