// In-process cost of one token check (the service's own Authenticator, real jose verification), in
// CPU µs: steadier than a load test on a shared machine, and it isolates exactly what auth adds.
import { Authenticator } from '../../packages/error-api/dist/auth.js';
import { resolveConfig } from '../../packages/error-api/dist/config.js';
import { loadVerifier } from '../../packages/error-api/dist/keys.js';

/** CPU µs per `authenticate()` of one valid token, after a warm-up. */
export async function verifyCostUs(env, token, cacheSeconds, n = 5000) {
  const config = resolveConfig({ ...env, ERROR_API_TOKEN_CACHE_SECONDS: String(cacheSeconds) });
  const auth = new Authenticator(await loadVerifier(config.key), config);
  const header = `Bearer ${token}`;
  for (let i = 0; i < 500; i++) await auth.authenticate(header);
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const outcome = await auth.authenticate(header);
    if (!outcome.ok) throw new Error(`bench token refused: ${outcome.detail}`);
  }
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / n;
}
