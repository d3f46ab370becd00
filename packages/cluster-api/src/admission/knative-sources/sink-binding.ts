/**
 * Knative's SinkBinding webhook (psbinding's mutating webhook) as an admission plugin: a workload
 * with a pod template (`spec.template.spec`) created or updated in a namespace where a SinkBinding
 * names it — by name, or by a selector its labels match, with its apiVersion and kind — is bound
 * as it is stored (sources/binding.ts: K_SINK, K_CE_OVERRIDES), from each binding's resolved
 * `status.sinkUri`. A workload created after its binding so starts bound, and an update that drops
 * the variables (a `kubectl apply` of the original manifest) keeps them, without a rollout between.
 * Bindings being deleted, or whose sink is not resolved yet, bind nothing (the controller unbinds
 * and binds; controllers/source-sinkbinding/).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../api/meta.js';
import { selectorMatches } from '../../registry/kinds/label-selector.js';
import { bound } from '../../sources/binding.js';
import { listedNamespaceObjects } from '../lookup.js';
import type { AdmissionPlugin, AdmissionRequest } from '../plugin.js';

type Binding = KubeObject & { spec?: { subject?: { apiVersion?: string; kind?: string; name?: string; selector?: unknown }; ceOverrides?: unknown }; status?: { sinkUri?: string } };

const hasPodTemplate = (o: KubeObject): boolean => {
  const template = (o as { spec?: { template?: { spec?: { containers?: unknown } } } }).spec?.template;
  return Array.isArray(template?.spec?.containers);
};

const names = (b: Binding, req: AdmissionRequest): boolean => {
  const s = b.spec?.subject;
  if (!s || s.kind !== req.kind || s.apiVersion !== (req.group ? `${req.group}/${req.version}` : req.version)) return false;
  return s.name ? s.name === req.name : s.selector !== undefined && selectorMatches(s.selector, req.object.metadata.labels ?? {});
};

export const SinkBindingInjection: AdmissionPlugin = {
  name: 'knative.dev/sinkbinding',
  handles: (req) => (req.operation === 'CREATE' || req.operation === 'UPDATE') && req.subresource === undefined && req.group !== 'sources.knative.dev' && hasPodTemplate(req.object),
  async mutate(req) {
    const bindings = (await listedNamespaceObjects(req, 'sources.knative.dev', 'v1', 'sinkbindings')) as Binding[];
    let object = req.object;
    for (const b of bindings) {
      if (b.metadata.deletionTimestamp || !b.status?.sinkUri || !names(b, req)) continue;
      object = bound(object, b.status.sinkUri, b.spec?.ceOverrides);
    }
    if (object === req.object || isDeepStrictEqual(object, req.object)) return false;
    (req.object as { spec?: unknown }).spec = (object as { spec?: unknown }).spec;
    return true;
  },
};
