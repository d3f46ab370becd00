/**
 * End to end as an operator runs it: both packages built, `func-runtime packages/error-api` as a
 * real process, one authenticated call, and no token anywhere in its output.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIENCE, ISSUER, SECRET, hsEnv, sign } from './tokens.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
let child: ChildProcess;
let output = '';
let url: string;

const listeningPort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within 20 s:\n${output}`)), 20_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const port = /"port":(\d+)[^\n]*"msg":"listening"/.exec(output)?.[1];
      if (port) {
        clearTimeout(timer);
        resolve(Number(port));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    child.once('exit', (code) => reject(new Error(`func-runtime exited with ${code}:\n${output}`)));
  });

beforeAll(async () => {
  execFileSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-b', 'packages/error-api'], { cwd: root, stdio: 'pipe' });
  child = spawn(
    process.execPath,
    ['packages/runtime/dist/cli.js', 'packages/error-api', '--port', '0', '--host', '127.0.0.1', '--log-level', 'info'],
    { cwd: root, env: { ...process.env, ...hsEnv }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  url = `http://127.0.0.1:${await listeningPort()}`;
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
});

describe('func-runtime packages/error-api', () => {
  it('serves a description to an authenticated caller and never logs the token', async () => {
    const token = await sign();
    const res = await fetch(`${url}/api/v1/error/expired_token`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ type: `${url}/api/v1/error/expired_token`, title: 'expired_token' });

    const refused = await fetch(`${url}/api/v1/error/expired_token`, { headers: { authorization: `Bearer ${token}x` } });
    expect(refused.status).toBe(401);
    expect((await fetch(`${url}/health/readiness`)).status).toBe(200);

    await new Promise((r) => setTimeout(r, 200)); // let the request log lines flush
    // The request log lines are there (so the checks below look at real request logs)...
    expect(output.match(/\/api\/v1\/error\/expired_token/g)?.length).toBeGreaterThanOrEqual(2);
    expect(output).not.toContain(token.split('.')[2]);
    expect(output).not.toContain(hsEnv.ERROR_API_JWT_SECRET);
  });
});

describe('mint-token', () => {
  const mint = (args: string[], env: Record<string, string>) => {
    try {
      const stdout = execFileSync(process.execPath, ['packages/error-api/dist/mint-token.js', ...args], {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: 'pipe',
        encoding: 'utf8',
      });
      return { code: 0, stdout, stderr: '' };
    } catch (err) {
      const e = err as { status: number; stdout: string; stderr: string };
      return { code: e.status, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it('prints a token the running service accepts, with the configured claims', async () => {
    const { code, stdout } = mint(['--ttl', '120', '--sub', 'me'], hsEnv);
    expect(code).toBe(0);
    const token = stdout.trim();
    const { payload } = await jwtVerify(token, new TextEncoder().encode(SECRET), { issuer: ISSUER, audience: AUDIENCE });
    expect(payload).toMatchObject({ scope: 'errors:read', sub: 'me' });
    expect(payload.exp! - payload.iat!).toBe(120);
    expect((await fetch(`${url}/api/v1/error/Gone`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });

  it.each([
    [['--ttl', 'soon'], hsEnv, /--ttl must be a number of seconds/],
    [['--bogus'], hsEnv, /Unknown option '--bogus'/],
    [[], {}, /no token-verification key/],
    [[], { ERROR_API_JWKS_FILE: '/nonexistent.json' }, /only HS256 tokens can be minted/],
  ])('%j with %j fails clearly and prints no token', (args, env, message) => {
    const { code, stdout, stderr } = mint(args, env as Record<string, string>);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
  });
});
