// The error-api with its token check replaced by "always allowed", for this bench only: the same
// routes, catalog, bodies and ETags as the real service, so the difference in throughput between the
// two is the cost of verifying the token. Never deployed; loaded by func-runtime like any function.
import { runtimeErrors } from '@func/runtime';
import { buildCatalog } from '../../packages/error-api/dist/catalog.js';
import { resolveConfig } from '../../packages/error-api/dist/config.js';
import { route } from '../../packages/error-api/dist/routes.js';

let svc;

export const init = () => {
  const config = resolveConfig({ ERROR_API_DEV_MODE: '1' });
  svc = { config, catalog: buildCatalog(runtimeErrors), auth: { authenticate: async () => ({ ok: true }) }, openapi: {} };
};

export const handle = (context) =>
  route(svc, { method: context.method, path: context.path, headers: context.headers, encrypted: false });
