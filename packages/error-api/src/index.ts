/**
 * @func/error-api: the error-description service, a function like any user's. `func-runtime
 * packages/error-api` loads this module and finds the Function object's members as named exports.
 */
import { runtimeErrors } from '@func/runtime';
import { createErrorApi } from './service.js';

const service = createErrorApi({ runtimeErrors });

export const { init, handle, liveness, readiness, logLevel } = service;

export { createErrorApi, type ErrorApi, type ServiceOptions } from './service.js';
export type * from './types.js';
