/**
 * The admission plugins the API server runs, in kube-apiserver's order (its
 * `AllOrderedPlugins`: NamespaceLifecycle … LimitRanger, ServiceAccount, … PodSecurity, …
 * ResourceQuota last among validating ones), OpenShift's SecurityContextConstraint after
 * PodSecurity. Adding a plugin is one folder under admission/ and one entry here.
 *
 * NamespaceLifecycle (registry/generic/namespace-lifecycle.ts) and NodeRestriction
 * (registry/kinds/node-restriction.ts) run as the store's own checks, before this chain.
 */
import type { AdmissionPlugin } from './plugin.js';
import { KnativeServingValidation } from './knative-serving/validation.js';
import { KnativeSourcesValidation } from './knative-sources/validation.js';
import { SinkBindingInjection } from './knative-sources/sink-binding.js';
import { KnativeFlowsValidation } from './knative-flows/validation.js';
import { LimitRanger } from './limit-ranger/limit-ranger.js';
import { PodSecurity } from './pod-security/pod-security.js';
import { ResourceQuota } from './resource-quota/resource-quota.js';
import { SecurityContextConstraint } from './security-context-constraints/plugin.js';

export const AdmissionPlugins: readonly AdmissionPlugin[] = [
  LimitRanger,
  PodSecurity,
  // OpenShift's, after PodSecurity.
  SecurityContextConstraint,
  // Knative Serving's validating webhook, as a plugin (validating webhooks run before ResourceQuota).
  KnativeServingValidation,
  // Knative Eventing's, for the sources: the SinkBinding webhook, then the sources' validation.
  SinkBindingInjection,
  KnativeSourcesValidation,
  // Knative Eventing's, for the messaging and flows kinds.
  KnativeFlowsValidation,
  ResourceQuota,
];
