/**
 * One admission plugin, as kube-apiserver's (k8s.io/apiserver/pkg/admission): what a write is checked
 * and changed by after it is decoded, defaulted and validated by its kind, and before it is stored.
 * A plugin is data plus one module: its name (kube-apiserver's, as `--enable-admission-plugins`
 * takes it), which requests it looks at, and a `mutate` step, a `validate` step, or both. Mutating
 * steps of every plugin run first, in the chain's order (chain.ts), then validating steps; a step
 * refuses by throwing an ApiError (a Forbidden, Invalid or TooManyRequests Status).
 */
import type { KubeObject } from '../api/meta.js';
import type { Services } from '../registry/definition.js';
import type { RequestContext } from '../registry/rest.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** admission.Attributes: the request as a plugin sees it. */
export interface AdmissionRequest {
  operation: Operation;
  group: string;
  version: string;
  /** The plural (`pods`). */
  resource: string;
  /** Set for a write through a subresource (`status`, `ephemeralcontainers`). */
  subresource?: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The object as it would be stored; a mutating step changes it in place. */
  object: KubeObject;
  /** The object it replaces (UPDATE). */
  oldObject?: KubeObject;
  /** Who asks (ctx.user), dry run, where warnings go. */
  ctx: RequestContext;
  services: Services;
}

export interface AdmissionPlugin {
  /** kube-apiserver's (or OpenShift's) name: `LimitRanger`, `ResourceQuota`, `PodSecurity`, `security.openshift.io/SecurityContextConstraint`. */
  readonly name: string;
  /** Whether the plugin looks at this request at all (kind, operation, subresource). */
  handles(req: AdmissionRequest): boolean;
  /** Changes `req.object` (defaults); answers true when it changed something, so the kind's validation runs again. */
  mutate?(req: AdmissionRequest): boolean | Promise<boolean>;
  /** Refuses by throwing; changes nothing. */
  validate?(req: AdmissionRequest): void | Promise<void>;
}

/** Adds a warning to the answer (`Warning: 299 - "…"`, which kubectl prints as `Warning: …`). */
export const warn = (ctx: RequestContext, message: string): void => {
  (ctx.warnings ??= []).push(message);
};
