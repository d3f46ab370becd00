import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.js';
import { apiServerEvent, subjectOf } from './apiserver/event.js';
import { bound } from './binding.js';
import { derivative } from './derivative.js';
import { pingEvent } from './ping/event.js';
import { nextPingAt } from './ping/adapter.js';

const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'n' }, data: { a: 'b' } } as KubeObject;

describe('the events sources make', () => {
  it('PingSource: data as given, JSON re-encoded with sorted keys, base64 decoded, none', () => {
    expect(pingEvent('n', 'p', { data: 'plain', contentType: 'text/plain' })).toEqual({
      attributes: { type: 'dev.knative.sources.ping', source: '/apis/v1/namespaces/n/pingsources/p', datacontenttype: 'text/plain' }, data: Buffer.from('plain'),
    });
    expect(Buffer.from(pingEvent('n', 'p', { data: '{ "b": 1, "a": [1, 2] }', contentType: 'application/json' }).data!).toString()).toBe('{"a":[1,2],"b":1}');
    expect(Buffer.from(pingEvent('n', 'p', { dataBase64: 'aGVsbG8=' }).data!).toString()).toBe('hello');
    expect(pingEvent('n', 'p', {})).toEqual({ attributes: { type: 'dev.knative.sources.ping', source: '/apis/v1/namespaces/n/pingsources/p' } });
  });

  it('ApiServerSource: Knative\'s subject, types and data per mode', () => {
    expect(subjectOf(cm)).toBe('/apis/v1/namespaces/n/configmaps/c');
    expect(subjectOf({ ...cm, apiVersion: 'apps/v1', kind: 'Deployment' })).toBe('/apis/apps/v1/namespaces/n/deployments/c');
    const ref = apiServerEvent('https://api', 'Reference', 'delete', cm);
    expect(ref.attributes).toEqual({ type: 'dev.knative.apiserver.ref.delete', source: 'https://api', subject: '/apis/v1/namespaces/n/configmaps/c', datacontenttype: 'application/json' });
    expect(JSON.parse(Buffer.from(ref.data).toString())).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: 'n' });
    expect(JSON.parse(Buffer.from(apiServerEvent('https://api', 'Resource', 'add', cm).data).toString())).toEqual(cm);
  });
});

describe('when a PingSource fires', () => {
  it('in its timezone, else UTC, across a DST change', () => {
    const after = Date.parse('2026-03-28T12:00:00Z');
    expect(new Date(nextPingAt({ schedule: '0 9 * * *' }, after)!).toISOString()).toBe('2026-03-29T09:00:00.000Z');
    // Paris moves to summer time on 2026-03-29: 09:00 there is 07:00Z that day, 08:00Z the day before.
    expect(new Date(nextPingAt({ schedule: '0 9 * * *', timezone: 'Europe/Paris' }, after)!).toISOString()).toBe('2026-03-29T07:00:00.000Z');
    expect(new Date(nextPingAt({ schedule: '*/15 * * * *' }, Date.parse('2026-01-01T00:07:30Z'))!).toISOString()).toBe('2026-01-01T00:15:00.000Z');
    expect(new Date(nextPingAt({ schedule: '@hourly' }, Date.parse('2026-01-01T00:59:59Z'))!).toISOString()).toBe('2026-01-01T01:00:00.000Z');
  });
});

describe('SinkBinding on a pod template', () => {
  const deployment = (env?: { name: string; value?: string }[]) => ({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' },
    spec: { template: { spec: { initContainers: [{ name: 'i' }], containers: [{ name: 'c', ...(env && { env }) }] } } },
  }) as KubeObject;
  const envs = (o: KubeObject) => (o as any).spec.template.spec;

  it('appends K_SINK and K_CE_OVERRIDES to every container, replacing earlier ones, and undoes', () => {
    const once = bound(deployment([{ name: 'A', value: '1' }, { name: 'K_SINK', value: 'old' }, { name: 'K_CA_CERTS', value: 'x' }]), 'http://s/', { extensions: { a: 'b' } });
    expect(envs(once).containers[0].env).toEqual([{ name: 'A', value: '1' }, { name: 'K_SINK', value: 'http://s/' }, { name: 'K_CE_OVERRIDES', value: '{"extensions":{"a":"b"}}' }]);
    expect(envs(once).initContainers[0].env).toEqual([{ name: 'K_SINK', value: 'http://s/' }, { name: 'K_CE_OVERRIDES', value: '{"extensions":{"a":"b"}}' }]);
    expect(envs(bound(deployment(), 'http://s/', undefined)).containers[0].env).toEqual([{ name: 'K_SINK', value: 'http://s/' }, { name: 'K_CE_OVERRIDES', value: '' }]);
    expect(bound(once, 'http://s/', { extensions: { a: 'b' } })).toEqual(once);
    expect(envs(bound(once, undefined, undefined)).containers[0].env).toEqual([{ name: 'A', value: '1' }]);
  });

  it('leaves an object without a pod template as it is', () => {
    const odd = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, spec: 'not an object' } as unknown as KubeObject;
    expect(bound(odd, 'http://s/', undefined)).toEqual(odd);
  });
});

describe('DeepDerivative', () => {
  it('compares only what the desired object sets, and lets lists grow', () => {
    expect(derivative({ a: 1, b: { c: [1, { d: 'x' }] } }, { a: 1, z: 9, b: { c: [1, { d: 'x', e: 2 }, 3] } })).toBe(true);
    expect(derivative({ a: 1 }, { a: 2 })).toBe(false);
    expect(derivative({ c: [1, 2] }, { c: [1] })).toBe(false);
    expect(derivative({ a: {} }, { a: 'str' })).toBe(false);
    expect(derivative({ a: '', b: 0, c: [] }, {})).toBe(true);
  });
});
