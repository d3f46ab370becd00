import { describe, expect, it } from 'vitest';
import { podQosClass } from './qos.js';

const c = (requests?: Record<string, unknown>, limits?: Record<string, unknown>) => ({ name: 'c', resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) } });

describe('podQosClass (qos.GetPodQOS)', () => {
  it('BestEffort: nothing requested or limited, zero amounts, or only other resources', () => {
    expect(podQosClass({ containers: [{ name: 'c' }] })).toBe('BestEffort');
    expect(podQosClass({ containers: [c({ cpu: '0' }, { memory: '0' })] })).toBe('BestEffort');
    expect(podQosClass({ containers: [c({ 'ephemeral-storage': '1Gi' }, { 'example.com/gpu': '1' })] })).toBe('BestEffort');
  });

  it('Guaranteed: every container (init ones too) limits cpu and memory and requests equal limits (a missing request is the limit)', () => {
    expect(podQosClass({ containers: [c({ cpu: '500m', memory: '64Mi' }, { cpu: '0.5', memory: '67108864' })] })).toBe('Guaranteed');
    expect(podQosClass({ containers: [c(undefined, { cpu: '1', memory: '1Gi' })], initContainers: [c(undefined, { cpu: '100m', memory: '1Mi' })] })).toBe('Guaranteed');
  });

  it('Burstable: a request below its limit, a limit missing, or one container without resources', () => {
    expect(podQosClass({ containers: [c({ cpu: '100m', memory: '64Mi' }, { cpu: '200m', memory: '64Mi' })] })).toBe('Burstable');
    expect(podQosClass({ containers: [c(undefined, { memory: '64Mi' })] })).toBe('Burstable');
    expect(podQosClass({ containers: [c(undefined, { cpu: '1', memory: '1Gi' }), { name: 'd' }] })).toBe('Burstable');
    expect(podQosClass({ containers: [c({ cpu: '100m' })] })).toBe('Burstable');
  });

  it('malformed specs and quantities count as nothing', () => {
    expect(podQosClass(undefined)).toBe('BestEffort');
    expect(podQosClass({ containers: 'x' })).toBe('BestEffort');
    expect(podQosClass({ containers: [null, 3, { resources: 'x' }] })).toBe('BestEffort');
    expect(podQosClass({ containers: [c({ cpu: 'lots' }, { memory: [] })] })).toBe('BestEffort');
  });
});
