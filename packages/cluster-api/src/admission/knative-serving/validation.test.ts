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
const refusal = (r: AdmissionRequest): string | undefined => {
  try {
    plugin.validate!(r);
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
  it('admits Knative\'s examples: no traffic, a split summing to 100, tags, a Revision left as it was', () => {
    expect(refusal(req('Service', { template: { spec: { containers: [{ image: 'x' }] } } }))).toBeUndefined();
    expect(refusal(req('Service', { traffic: [{ latestRevision: true, percent: 90 }, { revisionName: 'x-00001', percent: 10, tag: 'old' }] }))).toBeUndefined();
    expect(refusal(req('Route', { traffic: [{ configurationName: 'x', percent: 100 }, { revisionName: 'x-00001', percent: 0, tag: 'canary' }] }))).toBeUndefined();
    expect(refusal(req('Revision', { containers: [{ image: 'x' }] }, 'UPDATE', { containers: [{ image: 'x' }] }))).toBeUndefined();
  });

  it('defaults a lone target\'s percent to 100', () => {
    const r = req('Service', { traffic: [{ latestRevision: true }] });
    expect(plugin.mutate!(r)).toBe(true);
    expect((r.object.spec as { traffic: unknown[] }).traffic).toEqual([{ latestRevision: true, percent: 100 }]);
    expect(refusal(r)).toBeUndefined();
    expect(plugin.mutate!(req('Service', { traffic: [{ latestRevision: true }, { revisionName: 'a' }] }))).toBe(false);
  });

  it('refuses malformed traffic with Knative\'s messages', () => {
    expect(refusal(req('Service', { traffic: [{ latestRevision: true, percent: 90 }] }))).toBe('Traffic targets sum to 90, want 100: spec.traffic');
    expect(refusal(req('Route', { traffic: [{ configurationName: 'x', revisionName: 'y', percent: 100 }] }))).toBe('expected exactly one, got both: spec.traffic[0].revisionName, spec.traffic[0].configurationName');
    expect(refusal(req('Route', { traffic: [{ percent: 100 }] }))).toBe('expected exactly one, got neither: spec.traffic[0].configurationName, spec.traffic[0].revisionName');
    expect(refusal(req('Service', { traffic: [{ latestRevision: true, revisionName: 'y', percent: 100 }] }))).toBe('may not set revisionName if latestRevision is true: spec.traffic[0].latestRevision');
    expect(refusal(req('Service', { traffic: [{ latestRevision: true, percent: 50, tag: 'a' }, { revisionName: 'y', percent: 50, tag: 'a' }] })))
      .toBe('Multiple definitions for "a": spec.traffic[0].tag, spec.traffic[1].tag');
    expect(refusal(req('Service', { traffic: [{ latestRevision: true, percent: 100.5 }] })))
      .toBe('expected 0 <= 100.5 <= 100: spec.traffic[0].percent\nTraffic targets sum to 0, want 100: spec.traffic');
    expect(refusal(req('Service', { traffic: [{ latestRevision: true, percent: 100, tag: 'Bad_Tag' }] }))).toBe('not a DNS 1035 label: "Bad_Tag": spec.traffic[0].tag');
    expect(refusal(req('Service', { traffic: 'all' }))).toBe('expected a list: spec.traffic');
  });

  it('bounds containerConcurrency and timeoutSeconds, and keeps a Revision\'s spec as created', () => {
    expect(refusal(req('Service', { template: { spec: { containerConcurrency: 1001 } } }))).toBe('expected 0 <= 1001 <= 1000: spec.template.spec.containerConcurrency');
    expect(refusal(req('Configuration', { template: { spec: { timeoutSeconds: -1 } } }))).toBe('expected 0 <= -1 <= 600: spec.template.spec.timeoutSeconds');
    expect(refusal(req('Revision', { containers: [{ image: 'y' }] }, 'UPDATE', { containers: [{ image: 'x' }] }))).toBe('Immutable fields changed (-old +new): spec');
  });

  it('looks only at writes of the serving kinds themselves, not at their status', () => {
    expect(plugin.handles({ ...req('Service', {}), subresource: 'status' })).toBe(false);
    expect(plugin.handles({ ...req('Service', {}), group: 'apps' })).toBe(false);
    expect(plugin.handles({ ...req('Service', {}), operation: 'DELETE' })).toBe(false);
  });
});
