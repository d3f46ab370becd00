/**
 * `func-runtime invoke --broker`: a binary CloudEvent POSTed to a broker's ingress given by URL (a
 * real HTTP server stands for the ingress), and every malformed --broker or kubeconfig refused
 * before anything is sent. Lookups by name against a real cluster API are tested with the broker,
 * in packages/cluster-api/test/broker/ (invoke.test.ts, done-when.test.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBrokerName } from '../src/client/broker-target.js';
import { InvokeUsageError } from '../src/client/invoke-request.js';
import { freePort, spawnCli } from './dev-helpers.js';

let server: Server;
let url: string;
let dir: string;
const received: { method?: string; path?: string; headers: IncomingHttpHeaders; body: string }[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'invoke-broker-'));
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      received.push({ method: req.method, path: req.url, headers: req.headers, body });
      res.writeHead(202).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI with a private HOME, so no kubeconfig of the machine is read. */
async function invoke(env: NodeJS.ProcessEnv, ...args: string[]) {
  const proc = spawnCli(['invoke', ...args], { env: { PATH: process.env.PATH, HOME: dir, ...env } });
  let stdout = '';
  let stderr = '';
  proc.child.stdout!.on('data', (d: Buffer) => (stdout += d));
  proc.child.stderr!.on('data', (d: Buffer) => (stderr += d));
  return { code: await proc.exited, stdout, stderr };
}

describe('func-runtime invoke --broker', () => {
  it('sends a binary CloudEvent to the ingress URL given, whatever --cloudevent says', async () => {
    const r = await invoke({}, '--broker', `${url}/shop/default`, '--type', 'order.created', '--source', '/cli', '--id', 'b-1', '--data', '{"order":7}');
    expect(r.stderr).toContain(`Sending CloudEvent id=b-1 type=order.created source=/cli to ${url}/shop/default`);
    expect(r.stdout).toMatch(/^HTTP 202 Accepted\n/);
    expect(r.code).toBe(0);
    const got = received.find((g) => g.headers['ce-id'] === 'b-1')!;
    expect(got).toMatchObject({ method: 'POST', path: '/shop/default', body: '{"order":7}' });
    expect(got.headers).toMatchObject({ 'ce-specversion': '1.0', 'ce-type': 'order.created', 'ce-source': '/cli', 'content-type': 'application/json' });
  });

  it.each([
    ['a/b/c', /--broker "a\/b\/c" is neither a URL nor a Broker name/],
    ['Default', /neither a URL nor a Broker name/],
    ['ns/', /neither a URL nor a Broker name/],
    ['ftp://host/x', /Only http:\/\/ and https:\/\/ URLs/],
  ])('refuses --broker %j with exit 2', async (value, message) => {
    const r = await invoke({}, '--broker', value);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('needs a kubeconfig to look a Broker up by name: exit 2 naming what is wrong', async () => {
    const none = await invoke({ KUBECONFIG: join(dir, 'missing.yaml') }, '--broker', 'default');
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/No kubeconfig/);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'clusters: [oops');
    const broken = await invoke({ KUBECONFIG: bad }, '--broker', 'default');
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`kubeconfig ${bad}: not valid YAML`);
  });

  it('exits 3 when the cluster API does not answer', async () => {
    const port = await freePort();
    const kubeconfig = join(dir, 'closed.yaml');
    writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\nclusters: [{name: k, cluster: {server: "http://127.0.0.1:${port}"}}]\nusers: [{name: u, user: {token: t}}]\n`);
    const r = await invoke({ KUBECONFIG: kubeconfig }, '--broker', 'shop/default');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/cannot look up Broker shop\/default: Cannot reach the Kubernetes API/);
  });

  it('reads a name with or without its namespace', () => {
    expect(parseBrokerName('default')).toEqual({ name: 'default' });
    expect(parseBrokerName('shop/orders-1')).toEqual({ namespace: 'shop', name: 'orders-1' });
    expect(() => parseBrokerName('/x')).toThrow(InvokeUsageError);
  });
});
