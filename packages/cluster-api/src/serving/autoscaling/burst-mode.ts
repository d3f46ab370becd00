/**
 * Whether a revision's traffic goes through the activator or straight to its pods: Knative's
 * ServerlessService modes, `Proxy` and `Serve`, decided as Knative's KPA does — Proxy when the
 * revision wants no pod or its excess burst capacity (decider.ts) is negative, Serve otherwise. The
 * autoscaler marks the mode on the Revision (an annotation the revision controller keeps off the
 * pods); the gateway reads it. In Proxy its activator holds what no ready pod has room for under
 * containerConcurrency (the throttler); in Serve it sends each request to the ready pod with the
 * fewest in flight, whose own breaker queues beyond containerConcurrency (queue-proxy's). At zero
 * pods the activator holds in either mode. No mark (a revision the autoscaler has not decided yet,
 * or of another class) is Proxy.
 */
import { Annotation } from '../kinds.js';

export type BurstMode = 'Proxy' | 'Serve';

export const BurstModeAnnotation = Annotation.serviceMode;

/** The mode for a decision: `desired` pods with `excessBurstCapacity` to spare. */
export const burstMode = (desired: number, excessBurstCapacity: number): BurstMode => (desired === 0 || excessBurstCapacity < 0 ? 'Proxy' : 'Serve');

/** The mode marked on a revision (Proxy when none, or not one of the two). */
export const modeOf = (annotations: Record<string, string> | undefined): BurstMode => (annotations?.[BurstModeAnnotation] === 'Serve' ? 'Serve' : 'Proxy');

/** What the gateway's activator counts as one ready pod's room: containerConcurrency in Proxy (0: no limit), no limit in Serve. */
export const gatewayPodCapacity = (annotations: Record<string, string> | undefined, containerConcurrency: number | undefined): number =>
  modeOf(annotations) === 'Serve' ? 0 : containerConcurrency ?? 0;
