#!/usr/bin/env node
/**
 * `error-api-token [--ttl seconds] [--scope s] [--sub name]`: prints an HS256 token signed with
 * ERROR_API_JWT_SECRET and carrying the configured issuer, audience and required scope, for calling
 * a locally running service with curl. Only this command writes a token out, and only to stdout.
 */
import { parseArgs } from 'node:util';
import { ConfigError, Env, resolveConfig } from './config.js';
import { mintToken } from './token.js';

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: { ttl: { type: 'string', default: '3600' }, scope: { type: 'string' }, sub: { type: 'string' } },
  });
  const config = resolveConfig(process.env);
  if (config.key.kind !== 'secret') throw new ConfigError(`set ${Env.secret}: only HS256 tokens can be minted here`);
  if (!/^\d{1,7}$/.test(values.ttl)) throw new ConfigError('--ttl must be a number of seconds');
  const token = await mintToken({
    secret: new TextEncoder().encode(config.key.secret),
    scope: values.scope ?? config.scope,
    issuer: config.issuer,
    audience: config.audience,
    subject: values.sub,
    ttlSeconds: Number(values.ttl),
  });
  process.stdout.write(`${token}\n`);
};

main().catch((err: unknown) => {
  process.stderr.write(`error-api-token: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
