import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import type { AdmissionRequest } from '../plugin.js';
import { KnativeServingValidation as plugin } from './validation.js';

const req = (kind: string, spec: unknown, operation: 'CREATE' | 'UPDATE' = 'CREATE', oldSpec?: unknown): AdmissionRequest => ({
  operation, group: 'serving.knative.dev', version: 'v1', resource: `${kind.toLowerCase()}s`, kind, namespace: 'default', name: 'x',
  object: { apiVersion: 'serving.knative.dev/v1', kind, metadata: { name: 'x' }, spec } as KubeObject,
  ...(oldSpec !== undefined && { oldObject: { apiVersion: 'serving.knative.dev/v1', kind, metadata: { name: 'x' }, spec: oldSpec } as KubeObject }),
  ctx: {}, services: {} as AdmissionRequest['services'],
});

/** The refusal's message without the webhook's prefix, or undefined when admitted. */
const refusal = async (r: AdmissionRequest): Promise<string | undefined> => {
  try {
    await plugin.validate!(r);
    return undefined;
  } catch (err) {
    if (!isApiError(err)) throw err;
    expect(err.code).toBe(400);
    const prefix = 'admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: ';
    expect(err.message.startsWith(prefix)).toBe(true);
    return err.message.slice(prefix.length);
  }
};

describe('Knative Serving validation', () => {
  it('admits Knative\'s examples: no traffic, a split summing to 100, tags, a Revision left as it was', async () => {
    expect(await refusal(req('Service', { template: { spec: { containers: [{ image: 'x' }] } } }))).toBeUndefined();
    expect(await refusal(req('Service', { traffic: [{ latestRevision: true, percent: 90 }, { revisionName: 'x-00001', percent: 10, tag: 'old' }] }))).toBeUndefined();
    expect(await refusal(req('Route', { traffic: [{ configurationName: 'x', percent: 100 }, { revisionName: 'x-00001', percent: 0, tag: 'canary' }] }))).toBeUndefined();
    expect(await refusal(req('Revision', { containers: [{ image: 'x' }] }, 'UPDATE', { containers: [{ image: 'x' }] }))).toBeUndefined();
  });

  it('defaults a lone target\'s percent to 100', async () => {
    const r = req('Service', { traffic: [{ latestRevision: true }] });
    expect(plugin.mutate!(r)).toBe(true);
    expect((r.object.spec as { traffic: unknown[] }).traffic).toEqual([{ latestRevision: true, percent: 100 }]);
    expect(await refusal(r)).toBeUndefined();
    expect(plugin.mutate!(req('Service', { traffic: [{ latestRevision: true }, { revisionName: 'a' }] }))).toBe(false);
  });

  it('refuses malformed traffic with Knative\'s messages', async () => {
    expect(await refusal(req('Service', { traffic: [{ latestRevision: true, percent: 90 }] }))).toBe('Traffic targets sum to 90, want 100: spec.traffic');
    expect(await refusal(req('Route', { traffic: [{ configurationName: 'x', revisionName: 'y', percent: 100 }] }))).toBe('expected exactly one, got both: spec.traffic[0].revisionName, spec.traffic[0].configurationName');
    expect(await refusal(req('Route', { traffic: [{ percent: 100 }] }))).toBe('expected exactly one, got neither: spec.traffic[0].configurationName, spec.traffic[0].revisionName');
    expect(await refusal(req('Service', { traffic: [{ latestRevision: true, revisionName: 'y', percent: 100 }] }))).toBe('may not set revisionName if latestRevision is true: spec.traffic[0].latestRevision');
    expect(await refusal(req('Service', { traffic: [{ latestRevision: true, percent: 50, tag: 'a' }, { revisionName: 'y', percent: 50, tag: 'a' }] })))
      .toBe('Multiple definitions for "a": spec.traffic[0].tag, spec.traffic[1].tag');
    expect(await refusal(req('Service', { traffic: [{ latestRevision: true, percent: 100.5 }] })))
      .toBe('expected 0 <= 100.5 <= 100: spec.traffic[0].percent\nTraffic targets sum to 0, want 100: spec.traffic');
    expect(await refusal(req('Service', { traffic: [{ latestRevision: true, percent: 100, tag: 'Bad_Tag' }] }))).toBe('not a DNS 1035 label: "Bad_Tag": spec.traffic[0].tag');
    expect(await refusal(req('Service', { traffic: 'all' }))).toBe('expected a list: spec.traffic');
  });

  it('bounds containerConcurrency and timeoutSeconds, and keeps a Revision\'s spec as created', async () => {
    expect(await refusal(req('Service', { template: { spec: { containerConcurrency: 1001 } } }))).toBe('expected 0 <= 1001 <= 1000: spec.template.spec.containerConcurrency');
    expect(await refusal(req('Configuration', { template: { spec: { timeoutSeconds: -1 } } }))).toBe('expected 0 <= -1 <= 600: spec.template.spec.timeoutSeconds');
    expect(await refusal(req('Revision', { containers: [{ image: 'y' }] }, 'UPDATE', { containers: [{ image: 'x' }] }))).toBe('Immutable fields changed (-old +new): spec');
  });

  it('looks only at writes of the serving kinds themselves, not at their status', async () => {
    expect(plugin.handles({ ...req('Service', {}), subresource: 'status' })).toBe(false);
    expect(plugin.handles({ ...req('Service', {}), group: 'apps' })).toBe(false);
    expect(plugin.handles({ ...req('Service', {}), operation: 'DELETE' })).toBe(false);
  });

  it('holds a template\'s autoscaling annotations to Knative\'s rules, with config-autoscaler\'s limits', async () => {
    const A = 'autoscaling.knative.dev/';
    const withConfig = (r: AdmissionRequest, data?: Record<string, string>): AdmissionRequest =>
      ({ ...r, services: { find: (g: string, v: string, p: string) => (g === '' && v === 'v1' && p === 'configmaps' ? { get: async () => (data ? { data } : Promise.reject(new Error('not found'))) } : undefined) } as unknown as AdmissionRequest['services'] });
    const svc = (annotations: Record<string, string>, data?: Record<string, string>) => withConfig(req('Service', { template: { metadata: { annotations }, spec: { containers: [{ image: 'x' }] } } }), data);
    const at = (k: string) => `spec.template.metadata.annotations.${A}${k}`;
    expect(await refusal(svc({ [`${A}min-scale`]: '1', [`${A}max-scale`]: '3', [`${A}window`]: '20s', [`${A}target`]: '0.5', [`${A}metric`]: 'rps', [`${A}initial-scale`]: '2' }))).toBeUndefined();
    expect(await refusal(svc({ [`${A}min-scale`]: '3', [`${A}max-scale`]: '1' }))).toBe(`max-scale=1 is less than min-scale=3: ${at('max-scale')}, ${at('min-scale')}`);
    expect(await refusal(svc({ [`${A}min-scale`]: '-1' }))).toBe(`expected 0 <= -1 <= 2147483647: ${at('min-scale')}`);
    expect(await refusal(svc({ [`${A}max-scale`]: 'lots' }))).toBe(`invalid value: lots: ${at('max-scale')}`);
    expect(await refusal(svc({ [`${A}initial-scale`]: '0' }))).toBe(`invalid value: 0: ${at('initial-scale')}`);
    expect(await refusal(svc({ [`${A}initial-scale`]: '0' }, { 'allow-zero-initial-scale': 'true' }))).toBeUndefined();
    expect(await refusal(svc({ [`${A}window`]: '2s' }))).toBe(`expected 6s <= 2s <= 1h0m0s: ${at('window')}`);
    expect(await refusal(svc({ [`${A}window`]: '6500ms' }))).toBe(`must be specified with at most second precision: ${at('window')}`);
    expect(await refusal(svc({ [`${A}scale-down-delay`]: '2h' }))).toBe(`expected 0s <= 2h <= 1h0m0s: ${at('scale-down-delay')}`);
    expect(await refusal(svc({ [`${A}target`]: '0' }))).toBe(`target 0 should be at least 0.01: ${at('target')}`);
    expect(await refusal(svc({ [`${A}target-utilization-percentage`]: '101' }))).toBe(`expected 1 <= 101 <= 100: ${at('target-utilization-percentage')}`);
    expect(await refusal(svc({ [`${A}panic-threshold-percentage`]: '100' }))).toBe(`expected 110 <= 100 <= 1000: ${at('panic-threshold-percentage')}`);
    expect(await refusal(svc({ [`${A}target-burst-capacity`]: '-2' }))).toBe(`invalid value: -2: ${at('target-burst-capacity')}`);
    expect(await refusal(svc({ [`${A}metric`]: 'cpu' }))).toBe(`invalid value: cpu: ${at('metric')}`);
    expect(await refusal(svc({ [`${A}class`]: 'foo.autoscaling.knative.dev' }))).toBe(`invalid value: foo.autoscaling.knative.dev: ${at('class')}`);
    expect(await refusal(svc({ [`${A}class`]: 'example.com/custom', [`${A}metric`]: 'anything' }))).toBeUndefined();
    expect(await refusal(svc({ [`${A}max-scale`]: '20' }, { 'max-scale-limit': '10' }))).toBe(`expected 1 <= 20 <= 10: ${at('max-scale')}`);
    expect(await refusal(svc({ [`${A}max-scale`]: '0' }, { 'max-scale-limit': '10' }))).toBe(`max-scale=0 (unlimited), must be less than 10: ${at('max-scale')}`);
    // A Revision's own annotations, under its metadata.
    const rev = withConfig({ ...req('Revision', { containers: [{ image: 'x' }] }), object: { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name: 'x', annotations: { [`${A}window`]: 'soon' } }, spec: {} } as KubeObject });
    expect(await refusal(rev)).toBe(`invalid value: soon: metadata.annotations.${A}window`);
  });
});
