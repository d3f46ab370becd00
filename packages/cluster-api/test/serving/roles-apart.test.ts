/**
 * The broker and the serving gateway each in a process of their own, wired by their flags, as on
 * several machines: `cluster-api gateway --broker-url` hands requests that prefer respond-async to
 * that broker's queue over HTTP, and `cluster-api broker --gateway-url` runs them (and delivers to
 * Knative Service subscribers) through a gateway, here serve's own (`serve --no-broker`). The
 * function's answer reaches the caller's X-Callback-Url. A flag that is not an http://host:port URL
 * stops the process with a clear message.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli, haveKubectl } from '../serve/process.js';
import { startServingServe, type ServingServe } from '../support/serving-serve.js';
import { until } from '../../testing/src/poll.js';

const run = promisify(execFile);

/** A child process of the CLI; resolves with the URL its `listening` line names under `key`. */
async function startRole(args: string[], key: string, children: ChildProcess[]): Promise<string> {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const pattern = new RegExp(`"msg":"listening".*"${key}":"(http://127\\.0\\.0\\.1:\\d+)"`);
  return until(`cluster-api ${args[0]} listening`, () => {
    if (child.exitCode !== null) throw new Error(`cluster-api ${args[0]} exited: ${log}`);
    return pattern.exec(log)?.[1];
  }, { timeoutMs: 30_000 });
}

describe.skipIf(!haveKubectl)('the broker and the gateway apart (cluster-api broker --gateway-url, cluster-api gateway --broker-url)', () => {
  let sv: ServingServe;
  let callback: Server;
  const answers: { headers: IncomingHttpHeaders; body: string }[] = [];
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    sv = await startServingServe({ args: ['--no-broker'] });
    callback = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => {
        answers.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  }, 120_000);
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    callback?.close();
    await sv?.s.close();
  });

  it('queues at a gateway of its own, runs the call through serve\'s gateway, and POSTs the answer to the callback', async () => {
    await sv.apply('hello', `apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: hello
spec:
  template:
    spec:
      containers:
        - image: probe:v1
`);
    await sv.ok('wait', '--for=condition=Ready', 'ksvc/hello', '--timeout=120s');
    const kubeconfig = join(sv.s.dir, 'data', 'kubeconfig.yaml');
    const broker = await startRole(['broker', '--kubeconfig', kubeconfig, '--port', '0', '--data-dir', join(sv.s.dir, 'broker'), '--gateway-url', sv.gateway.origin], 'url', children);
    const gateway = new URL(await startRole(['gateway', '--kubeconfig', kubeconfig, '--port', '0', '--broker-url', broker], 'gateway', children));
    const to = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/done`;
    // The gateway learns the Route by its watch: until then the host is not known (404).
    const accepted = await until('202 from the gateway apart', () => new Promise<{ status: number; headers: IncomingHttpHeaders; body: string } | undefined>((resolve) => {
      request({ host: gateway.hostname, port: gateway.port, method: 'POST', path: '/env?name=K_REVISION', agent: false,
        headers: { host: 'hello.default.localhost', prefer: 'respond-async', 'x-callback-url': to, 'content-type': 'text/plain', 'content-length': '2' } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve(res.statusCode === 404 ? undefined : { status: res.statusCode!, headers: res.headers, body }));
      }).on('error', () => resolve(undefined)).end('hi');
    }), { timeoutMs: 30_000, everyMs: 100 });
    expect(accepted.status, accepted.body).toBe(202);
    expect(accepted.headers['preference-applied']).toBe('respond-async');
    const id = accepted.headers['x-call-id'];
    expect(typeof id).toBe('string');
    const done = await until('the answer at the callback', () => answers.find((a) => a.headers['x-call-id'] === id), { timeoutMs: 60_000 });
    expect(done.headers['x-function-status']).toBe('200');
    expect(done.headers['x-function-name']).toBe('default/hello');
    expect(done.body).toBe('hello-00001');
  }, 240_000);

  it.each([
    [['broker', '--gateway-url', 'ftp://127.0.0.1:1'], 'cluster-api: --gateway-url: "ftp://127.0.0.1:1" is not an http://host:port URL'],
    [['broker', '--gateway-url', 'http://127.0.0.1:1/path?x'], 'cluster-api: --gateway-url: "http://127.0.0.1:1/path?x" is not an http://host:port URL'],
    [['gateway', '--broker-url', 'not a url'], 'cluster-api: --broker-url: "not a url" is not an http://host:port URL'],
  ])('cluster-api %j exits 1 saying why', async (args, message) => {
    const kubeconfig = join(sv.s.dir, 'data', 'kubeconfig.yaml');
    const err = await run(process.execPath, [cli, ...args, '--kubeconfig', kubeconfig, '--port', '0', ...(args[0] === 'broker' ? ['--data-dir', join(sv.s.dir, 'b-bad')] : [])])
      .then(() => undefined, (e: { code: number; stderr: string }) => e);
    expect(err?.code).toBe(1);
    expect(err!.stderr).toContain(message);
    expect(err!.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
