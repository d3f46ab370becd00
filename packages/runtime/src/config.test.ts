import { describe, expect, it } from 'vitest';
import { OPTION_TABLE, OptionError, placeDefaults, resolveOptions } from './config.js';

describe('resolveOptions', () => {
  it('uses the defaults when nothing is given', () => {
    const o = resolveOptions({});
    expect(o).toMatchObject({ port: 8080, logLevel: 'warn', bodyLimit: 1_048_576, includeRaw: false, livenessPath: '/health/liveness', readinessPath: '/health/readiness', metricsPath: '/metrics' });
  });

  it.each([
    ['CLI over env', { cli: { port: 1 }, env: { PORT: '2' } }, 'port', 1],
    ['PORT over FUNC_PORT', { env: { PORT: '3', FUNC_PORT: '4' } }, 'port', 3],
    ['FUNC_PORT alone', { env: { FUNC_PORT: '4' } }, 'port', 4],
    ['env over function member', { env: { FUNC_LOG_LEVEL: 'error' }, fn: { logLevel: 'debug' } }, 'logLevel', 'error'],
    ['func.yaml run.envs over function member (it is environment)', { fn: { logLevel: 'debug' }, yaml: { run: { envs: [{ name: 'FUNC_LOG_LEVEL', value: 'fatal' }] } } }, 'logLevel', 'fatal'],
    ['real env over func.yaml run.envs', { env: { FUNC_LOG_LEVEL: 'error' }, yaml: { run: { envs: [{ name: 'FUNC_LOG_LEVEL', value: 'fatal' }] } } }, 'logLevel', 'error'],
    ['func.yaml run.envs PORT', { yaml: { run: { envs: [{ name: 'PORT', value: '9090' }] } } }, 'port', 9090],
    ['func.yaml run.envs FUNC_INCLUDE_RAW', { yaml: { run: { envs: [{ value: '{{ secret:s }}' }, { name: 'FUNC_INCLUDE_RAW', value: 'true' }] } } }, 'includeRaw', true],
    ['func.yaml run.envs {{ env:NAME }} from the local env', { env: { MY_LEVEL: 'trace' }, yaml: { run: { envs: [{ name: 'FUNC_LOG_LEVEL', value: '{{ env:MY_LEVEL }}' }] } } }, 'logLevel', 'trace'],
    ['func.yaml run.envs secret reference is skipped', { yaml: { run: { envs: [{ name: 'FUNC_LOG_LEVEL', value: '{{ secret:s:level }}' }] } } }, 'logLevel', 'warn'],
    ['top-level logLevel in func.yaml (faas-js-runtime\'s; only compatibility mode lets such a func.yaml through)', { yaml: { logLevel: 'fatal' } }, 'logLevel', 'fatal'],
    ['FUNC_COMPAT', { env: { FUNC_COMPAT: 'faas-js-runtime' } }, 'compat', 'faas-js-runtime'],
    ['compat default none', {}, 'compat', 'none'],
    ['FUNC_DRAIN_DELAY', { env: { FUNC_DRAIN_DELAY: '1500' } }, 'drainDelay', 1500],
    ['caller default over the table default', { defaults: { logLevel: 'info' } }, 'logLevel', 'info'],
    ['function member over caller default', { fn: { logLevel: 'debug' }, defaults: { logLevel: 'info' } }, 'logLevel', 'debug'],
    ['function includeRaw member', { fn: { includeRaw: true } }, 'includeRaw', true],
    ['FUNC_INCLUDE_RAW over function includeRaw member', { env: { FUNC_INCLUDE_RAW: 'false' }, fn: { includeRaw: true } }, 'includeRaw', false],
    ['func.yaml over default', { yaml: { deploy: { healthEndpoints: { liveness: '/alive' } } } }, 'livenessPath', '/alive'],
    ['LIVENESS_URL over func.yaml', { env: { LIVENESS_URL: '/l' }, yaml: { deploy: { healthEndpoints: { liveness: '/alive' } } } }, 'livenessPath', '/l'],
    ['READINESS_URL', { env: { READINESS_URL: '/r' } }, 'readinessPath', '/r'],
    ['FUNC_BODY_LIMIT', { env: { FUNC_BODY_LIMIT: '10' } }, 'bodyLimit', 10],
    ['FUNC_INCLUDE_RAW=true', { env: { FUNC_INCLUDE_RAW: 'true' } }, 'includeRaw', true],
    ['FUNC_INCLUDE_RAW=false', { env: { FUNC_INCLUDE_RAW: 'false' } }, 'includeRaw', false],
    ['empty env is unset', { env: { PORT: '' } }, 'port', 8080],
    ['log level case-insensitive', { env: { FUNC_LOG_LEVEL: 'DEBUG' } }, 'logLevel', 'debug'],
  ] as const)('%s', (_name, sources, key, expected) => {
    expect(resolveOptions(sources as never)[key]).toBe(expected);
  });

  it.each([
    [{ env: { PORT: 'eighty' } }, /PORT must be an integer/],
    [{ env: { PORT: '70000' } }, /PORT must be a port number/],
    [{ cli: { bodyLimit: -1 } }, /--body-limit must be an integer ≥ 0/],
    [{ env: { FUNC_LOG_LEVEL: 'loud' } }, /FUNC_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/],
    [{ fn: { logLevel: 'verbose' } }, /the function's logLevel member must be one of/],
    [{ yaml: { run: { envs: [{ name: 'FUNC_LOG_LEVEL', value: 'loud' }] } } }, /func\.yaml run\.envs FUNC_LOG_LEVEL must be one of/],
    [{ yaml: { run: { envs: [{ name: 'PORT', value: 'http' }] } } }, /func\.yaml run\.envs PORT must be an integer/],
    [{ yaml: { deploy: { healthEndpoints: { readiness: 'ready' } } } }, /func.yaml deploy.healthEndpoints.readiness must be a path/],
    [{ env: { FUNC_COMPAT: 'faas' } }, /FUNC_COMPAT must be one of none, faas-js-runtime, got "faas"/],
    [{ env: { FUNC_DRAIN_DELAY: '-5' } }, /FUNC_DRAIN_DELAY must be an integer ≥ 0/],
  ])('rejects %j naming the source', (sources, message) => {
    expect(() => resolveOptions(sources as never)).toThrow(OptionError);
    expect(() => resolveOptions(sources as never)).toThrow(message);
  });

  it('every row has a flag, a default and a description', () => {
    for (const row of OPTION_TABLE) {
      expect(row.flag).toMatch(/^[a-z-]+$/);
      expect(row.describe.length).toBeGreaterThan(5);
      expect(row.parse(row.default as never, row.flag)).toEqual(row.default);
    }
  });
});

describe('placeDefaults: defaults that depend on where the runtime runs', () => {
  it.each([
    ['installed as faas-js-runtime: its compatibility mode', {}, 'faas-js-runtime', { compat: 'faas-js-runtime' }],
    ['installed as @func/runtime: the spec', {}, 'runtime', {}],
    ['a Kubernetes pod: endpoints see the pod unready for 5 s before the listener closes', { KUBERNETES_SERVICE_HOST: '10.0.0.1' }, 'runtime', { drainDelay: 5000 }],
    ['a Knative pod: its queue-proxy drains, no delay here', { KUBERNETES_SERVICE_HOST: '10.0.0.1', K_SERVICE: 'fn' }, 'runtime', {}],
  ])('%s', (_name, env, installedAs, expected) => {
    expect(placeDefaults(env, installedAs)).toEqual(expected);
  });

  it('an explicit source wins over them', () => {
    expect(resolveOptions({ env: { FUNC_COMPAT: 'none' }, defaults: placeDefaults({}, 'faas-js-runtime') }).compat).toBe('none');
  });
});

