import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../api/meta.js';
import { isApiError } from '../../api/errors.js';
import type { AdmissionRequest } from '../plugin.js';
import { KnativeSourcesValidation as plugin } from './validation.js';

const req = (kind: string, spec: unknown): AdmissionRequest => ({
  operation: 'CREATE', group: 'sources.knative.dev', version: 'v1', resource: `${kind.toLowerCase()}s`, kind, namespace: 'default', name: 'x',
  object: { apiVersion: 'sources.knative.dev/v1', kind, metadata: { name: 'x', namespace: 'default' }, spec } as KubeObject,
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
    const prefix = 'admission webhook "validation.webhook.eventing.knative.dev" denied the request: validation failed: ';
    expect(err.message.startsWith(prefix)).toBe(true);
    return err.message.slice(prefix.length);
  }
};

const sink = { uri: 'http://example.com/' };

describe('Knative sources validation', () => {
  it('admits Knative\'s examples of each source', () => {
    expect(refusal(req('PingSource', { schedule: '*/2 * * * *', timezone: 'Europe/Paris', contentType: 'application/json', data: '{"a":1}', sink }))).toBeUndefined();
    expect(refusal(req('PingSource', { schedule: '@hourly', dataBase64: 'aGVsbG8=', sink: { ref: { apiVersion: 'v1', kind: 'Service', name: 's' } } }))).toBeUndefined();
    expect(refusal(req('ApiServerSource', { mode: 'Resource', resources: [{ apiVersion: 'v1', kind: 'Event' }], sink }))).toBeUndefined();
    expect(refusal(req('SinkBinding', { subject: { apiVersion: 'apps/v1', kind: 'Deployment', selector: { matchLabels: { a: 'b' } } }, sink }))).toBeUndefined();
    expect(refusal(req('ContainerSource', { template: { spec: { containers: [{ image: 'x' }] } }, sink }))).toBeUndefined();
  });

  it('defaults an ApiServerSource\'s mode and ServiceAccount', () => {
    const r = req('ApiServerSource', { resources: [{ apiVersion: 'v1', kind: 'Event' }], sink });
    expect(plugin.mutate!(r)).toBe(true);
    expect(r.object.spec).toMatchObject({ mode: 'Reference', serviceAccountName: 'default' });
    expect(plugin.mutate!(r)).toBe(false);
    expect(plugin.mutate!(req('PingSource', { schedule: '* * * * *', sink }))).toBe(false);
  });

  it('refuses a malformed PingSource with Knative\'s messages', () => {
    expect(refusal(req('PingSource', { schedule: '@every 1m', sink }))).toBe('invalid value: unsupported descriptor @every: spec.schedule');
    expect(refusal(req('PingSource', { schedule: '* * * * *', timezone: 'Mars/Olympus', sink }))).toBe('invalid value: provided bad location Mars/Olympus: unknown time zone Mars/Olympus: spec.timezone');
    expect(refusal(req('PingSource', { schedule: '* * * *', sink }))).toMatch(/^invalid value: .+: spec\.schedule$/);
    expect(refusal(req('PingSource', { schedule: '* * * * *', data: 'a', dataBase64: 'YQ==', sink }))).toBe('expected exactly one, got both: spec.data, spec.dataBase64');
    expect(refusal(req('PingSource', { schedule: '* * * * *', dataBase64: 'not base64!', sink }))).toBe('invalid value: illegal base64 data: spec.dataBase64');
    expect(refusal(req('PingSource', { schedule: '* * * * *', contentType: 'application/json', data: '[1]', sink }))).toMatch(/^invalid value: json: .+: spec\.data$/);
    expect(refusal(req('PingSource', { schedule: '* * * * *' }))).toBe('expected at least one, got none: spec.sink.ref, spec.sink.uri');
    expect(refusal(req('PingSource', { schedule: '* * * * *', sink: { uri: '/relative' } }))).toBe('invalid value: Relative URI is not allowed when Ref and [apiVersion, kind, name] is absent: spec.sink.uri');
    expect(refusal(req('PingSource', { schedule: '* * * * *', sink: { ref: { kind: 'Broker' }, uri: 'http://x/' } }))).toBe('Absolute URI is not allowed when Ref or [apiVersion, kind, name] exists: spec.sink.ref, spec.sink.uri');
    expect(refusal(req('PingSource', { schedule: '* * * * *', sink: { ref: { kind: 'Broker' } } }))).toBe('missing field(s): spec.sink.ref.apiVersion, spec.sink.ref.name');
    expect(refusal(req('PingSource', 'not an object'))).toMatch(/spec\.sink\.ref, spec\.sink\.uri/);
  });

  it('refuses a malformed ApiServerSource, SinkBinding and ContainerSource', () => {
    expect(refusal(req('ApiServerSource', { mode: 'Everything', sink }))).toBe('invalid value: Everything: spec.mode\nmissing field(s): spec.resources');
    expect(refusal(req('ApiServerSource', { mode: 'Resource', resources: [{ apiVersion: 'v1' }], owner: { apiVersion: 'apps/v1' }, sink })))
      .toBe('missing field(s): spec.owner.kind, spec.resources[0].kind');
    expect(refusal(req('SinkBinding', { subject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'a', selector: {} }, sink }))).toBe('expected exactly one, got both: spec.subject.name, spec.subject.selector');
    expect(refusal(req('SinkBinding', { subject: { kind: 'Deployment' }, sink }))).toBe('expected exactly one, got neither: spec.subject.name, spec.subject.selector\nmissing field(s): spec.subject.apiVersion');
    expect(refusal(req('SinkBinding', { sink }))).toBe('missing field(s): spec.subject');
    expect(refusal(req('ContainerSource', { template: { spec: { containers: [{ name: 'a' }] } }, sink }))).toBe('missing field(s): spec.template.spec.containers[0].image');
    expect(refusal(req('ContainerSource', { sink }))).toBe('missing field(s): spec.template.spec.containers');
  });
});
