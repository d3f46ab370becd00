/**
 * End to end as an operator runs it: both packages built, `func-runtime packages/error-api` as a
 * real process, one authenticated call, and no token anywhere in its output.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hsEnv, sign } from './tokens.js';

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
