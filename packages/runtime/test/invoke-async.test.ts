/**
 * Asynchronous invocation end to end, as a user runs it: `cluster-api serve` (its broker on SQLite,
 * its gateway, its node running pods as processes), a function deployed with `func-runtime deploy`,
 * invoked with `func-runtime invoke --async`. The gateway answers 202 at once with
 * `Preference-Applied: respond-async` and a call id; the function runs once and its answer (status,
 * headers, body) is POSTed to the callback URL; a function that keeps failing is tried 1 + `retry`
 * times (the Knative Service's `function.knative.dev/async-delivery` policy) and then lands in the
 * dead-letter sink with Knative's error extensions. Every malformed flag and header is refused.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../kube-client/test/cluster.js';
import { send } from '../src/client/loopback-fetch.js';
import { copyFixture, killAll, spawnCli, until } from './dev-helpers.js';
import { ownPodCidr } from './helpers/pod-cidr.js';

const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'func-async-'));
let cluster: Cluster;
let dir: string;
let remove: () => void;

interface Got { path?: string; headers: IncomingHttpHeaders; body: string }
/** A real HTTP server recording what it gets, answering `status`. */
async function recorder(status = 200): Promise<{ url: string; got: Got[]; server: Server }> {
  const got: Got[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      got.push({ path: req.url, headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, got, server };
}

let callback: Awaited<ReturnType<typeof recorder>>;
let deadLetters: Awaited<ReturnType<typeof recorder>>;

async function kubectl(...args: string[]): Promise<string> {
  return (await exec('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;
}

async function cli(args: string[]): Promise<{ code: number | null; output: string; stdout: string; stderr: string }> {
  const proc = spawnCli(args, { cwd: dir, env: { ...process.env, HOME: join(work, 'home'), XDG_CACHE_HOME: join(work, 'cache'), KUBECONFIG: cluster.kubeconfig } });
  let stdout = '';
  let stderr = '';
  proc.child.stdout!.on('data', (d: Buffer) => (stdout += d));
  proc.child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const code = await proc.exited;
  return { code, output: proc.output(), stdout, stderr };
}

beforeAll(async () => {
  ownPodCidr();
  cluster = await startCluster({ node: true, broker: true });
  await until('the embedded node', async () => ((await kubectl('get', 'nodes', '-o', 'name')).trim() ? true : undefined), 30_000);
  ({ dir, remove } = copyFixture('async-target'));
  [callback, deadLetters] = [await recorder(), await recorder(202)];
}, 60_000);
afterAll(async () => {
  await killAll();
  await cluster?.stop();
  for (const r of [callback, deadLetters]) if (r) await new Promise((done) => r.server.close(done));
  remove?.();
  rmSync(work, { recursive: true, force: true });
});

describe('func-runtime invoke --async on a deployed function', () => {
  let here = '';

  it('deploys the function and sets its delivery policy on the Knative Service', async () => {
    const res = await cli(['deploy']);
    expect(res.code, res.output).toBe(0);
    here = /^\s+from here\s+(http:\/\/async-target\.default\.localhost:\d+\/)/m.exec(res.output)![1]!;
    const policy = { retry: 2, backoffPolicy: 'linear', backoffDelay: 'PT0.05S', deadLetterSink: { uri: deadLetters.url } };
    await kubectl('annotate', 'ksvc', 'async-target', `function.knative.dev/async-delivery=${JSON.stringify(policy)}`);
  }, 120_000);

  it('answers 202 at once with the call id; the function runs once and its answer reaches the callback', async () => {
    expect(here, 'deployed').toBeTruthy();
    const res = await cli(['invoke', '--async', 'async-target', '--callback-url', `${callback.url}done`, '--data', '{"order":7}']);
    expect(res.code, res.output).toBe(0);
    expect(res.stdout).toMatch(/^HTTP 202 Accepted\n/);
    expect(res.stdout).toMatch(/^preference-applied: respond-async$/m);
    const id = /Queued: call id ([0-9a-f-]{36})/.exec(res.stderr)?.[1];
    expect(id, res.output).toBeTruthy();
    expect(res.stdout).toMatch(new RegExp(`^x-call-id: ${id}$`, 'm'));
    expect(res.stdout).toContain(`"id": "${id}"`);

    const [answer] = await until('the callback', () => (callback.got.length > 0 ? callback.got : undefined), 60_000);
    expect(answer!.path).toBe('/done');
    expect(answer!.headers).toMatchObject({ 'x-call-id': id, 'x-function-status': '201', 'x-function-name': 'default/async-target', 'x-answered-by': 'async-target' });
    expect(answer!.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(answer!.body)).toEqual({ echo: { order: 7 }, attempt: 1 });
    // Once: the function saw this call id one time.
    const count = await send(new URL(`/count?id=${id}`, here), { signal: AbortSignal.timeout(10_000) });
    expect(await count.json()).toEqual({ calls: 1 });
    expect(callback.got).toHaveLength(1);
  }, 90_000);

  it('a function failing 3 times lands the invocation in the dead-letter sink, and the callback gets its last answer', async () => {
    expect(here, 'deployed').toBeTruthy();
    const res = await cli(['invoke', '--async', '--name', 'async-target', '--callback-url', callback.url, '--data', 'payload', '--content-type', 'text/plain', '/fail']);
    expect(res.code, res.output).toBe(0);
    const id = /Queued: call id ([0-9a-f-]{36})/.exec(res.stderr)![1]!;
    const [dead] = await until('the dead-letter sink', () => (deadLetters.got.length > 0 ? deadLetters.got : undefined), 60_000);
    expect(dead!.headers).toMatchObject({
      'ce-id': id,
      'ce-type': 'dev.func.invocation',
      'ce-source': '/apis/serving.knative.dev/v1/namespaces/default/services/async-target',
      'ce-knativeerrorcode': '500',
      'content-type': 'text/plain',
    });
    expect(dead!.headers['ce-knativeerrordest']).toMatch(/\/fail$/);
    expect(Buffer.from(String(dead!.headers['ce-knativeerrordata']), 'base64').toString()).toContain('failing on purpose');
    // The request's headers are not handed to the sink.
    expect(dead!.headers['ce-funcheaders']).toBeUndefined();
    expect(dead!.body).toBe('payload');
    const count = await send(new URL(`/count?id=${id}`, here), { signal: AbortSignal.timeout(10_000) });
    expect(await count.json()).toEqual({ calls: 3 });
    const last = await until('the callback', () => callback.got.find((g) => g.headers['x-call-id'] === id), 30_000);
    expect(last.headers).toMatchObject({ 'x-function-status': '500' });
    expect(JSON.parse(last.body)).toMatchObject({ attempt: 3 });
  }, 90_000);

  it('refuses a malformed X-Callback-Url at the gateway, and serves a request without the preference as usual', async () => {
    expect(here, 'deployed').toBeTruthy();
    for (const bad of ['not a url', 'ftp://host/x', '/relative']) {
      const res = await send(new URL('/', here), { method: 'POST', headers: { prefer: 'respond-async', 'x-callback-url': bad }, body: Buffer.from('{}'), signal: AbortSignal.timeout(10_000) });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('X-Callback-Url must be an absolute http or https URL');
    }
    // Preferences other than respond-async, or none: the function answers in the request.
    const sync = await send(new URL('/', here), { method: 'POST', headers: { prefer: 'return=minimal', 'content-type': 'application/json' }, body: Buffer.from('{"x":1}'), signal: AbortSignal.timeout(10_000) });
    expect(sync.status).toBe(201);
    expect(sync.headers.get('preference-applied')).toBeNull();
    // respond-async among other preferences, with parameters, in any case.
    const mixed = await send(new URL('/', here), { method: 'POST', headers: { prefer: 'return=minimal, Respond-Async; wait=0', 'content-type': 'application/json' }, body: Buffer.from('{}'), signal: AbortSignal.timeout(10_000) });
    expect(mixed.status).toBe(202);
    expect(mixed.headers.get('x-call-id')).toMatch(/^[0-9a-f-]{36}$/);
  }, 60_000);

  it.each([
    [['--async', '--broker', 'default'], '--async invokes a function, --broker sends to a Broker: use one'],
    [['--callback-url', 'http://127.0.0.1:1/'], '--callback-url needs --async'],
  ])('refuses %j with exit 2', async (args, message) => {
    const res = await cli(['invoke', ...args]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(message);
  });
});
