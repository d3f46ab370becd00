/**
 * Endpoints (core/v1), schemaless: the addresses behind a Service, as a Service without selector
 * gets them by hand (and the broker reads them to reach a Trigger's `subscriber.ref`). Stored as
 * given until the typed kind, with Kubernetes' validation and protobuf message, replaces this file.
 */
import { AllVerbs, core } from './common.js';

export const endpoints = core({
  kind: 'Endpoints',
  plural: 'endpoints',
  singular: 'endpoints',
  namespaced: true,
  verbs: AllVerbs,
  shortNames: ['ep'],
  strategy: {},
  schemaless: true,
});
