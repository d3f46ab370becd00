import { describe, expect, it } from 'vitest';
import { hsEnv } from '../test/tokens.js';
import { createErrorApi } from './service.js';

describe('createErrorApi', () => {
  it('is not ready, and refuses requests with 503, until init has run', async () => {
    const api = createErrorApi({ env: hsEnv, runtimeErrors: {}, announce: () => {} });
    expect(api.liveness()).toBe('OK');
    expect(() => api.readiness()).toThrow(/not initialised/);
    await expect(api.handle({} as never)).rejects.toMatchObject({ statusCode: 503 });
    await api.init();
    expect(api.readiness()).toBe('OK');
  });

  it('stays not ready when init fails on its configuration', async () => {
    const api = createErrorApi({ env: { ERROR_API_JWT_SECRET: 'short' }, runtimeErrors: {} });
    await expect(api.init()).rejects.toThrow(/at least 32 bytes/);
    expect(() => api.readiness()).toThrow(/not initialised/);
  });

  it('prints a dev token only in dev mode', async () => {
    const lines: string[] = [];
    await createErrorApi({ env: hsEnv, runtimeErrors: {}, announce: (l) => lines.push(l) }).init();
    expect(lines).toEqual([]);
    await createErrorApi({ env: { ERROR_API_DEV_MODE: '1' }, runtimeErrors: {}, announce: (l) => lines.push(l) }).init();
    expect(lines.join('')).toMatch(/Authorization: Bearer [\w-]+\.[\w-]+\.[\w-]+\n/);
  });
});
